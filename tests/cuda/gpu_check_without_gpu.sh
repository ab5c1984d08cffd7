#!/usr/bin/env bash
# scripts/gpu-check on a build tree where no GPU is usable must fail at its gate, quickly: exit 1,
# a last line "gpu-check: FAIL (... gate: ...)", results.md ending with the same line, at most 6
# files written. Where a GPU is present this test reports itself skipped: run the check itself.
# Usage: gpu_check_without_gpu.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src="$1" build="$2"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "INGOT_SKIP: a GPU is present here: run scripts/gpu-check --build $build for the real check"
  exit 0
fi
out="$build/gpu-check-without-gpu"
rm -rf "$out"
t0=$(date +%s)
stdout=$(OUT="$out" timeout 100 "$src/scripts/gpu-check" --build "$build" 2>&1)
rc=$?
seconds=$(($(date +%s) - t0))
echo "$stdout"
echo "-- exit $rc after ${seconds}s"
last=$(tail -n 1 <<<"$stdout")
status=0
problem() {
  echo "FAILED: $1"
  status=1
}
((rc == 1)) || problem "gpu-check exits 1 without a GPU (it exited $rc)"
[[ "$last" == "gpu-check: FAIL ("*")" ]] || problem "the last line is 'gpu-check: FAIL (...)'"
[[ "$last" == *"gate: "* ]] || problem "a reason names the gate"
grep -q "^| test_cuda |" "$out/results.md" && problem "nothing runs after a failed gate"
[ "$(tail -n 1 "$out/results.md" 2>/dev/null)" = "$last" ] || problem "results.md ends with the verdict"
(($(find "$out" -type f | wc -l) <= 6)) || problem "at most 6 files in \$OUT"
((seconds < 60)) || problem "fails fast (took ${seconds}s)"
exit $status
