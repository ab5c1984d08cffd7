#!/bin/bash
# End-to-end checks of `ingot bench` and of `ingot run --profile` on tiny synthetic configs.
# Usage: bench_cli.sh INGOT_BINARY CASE   (CASE: json | table | run_profile | scaling)
set -euo pipefail
ingot=$1
case_name=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src"
fail() { echo "FAIL: $*" >&2; exit 1; }
tiny=(tests/bench_cli/tiny_mlp.yaml --warmup 1 --steps 2 --repeat 2 --infer-batch 8 --latency-iters 3)

case "$case_name" in
json)
  # stdout holds exactly one JSON object; the progress lines went to stderr.
  "$ingot" bench "${tiny[@]}" --json --set data.batch_size=8 > "$work/out.json" 2> "$work/err.txt" \
    || { cat "$work/err.txt"; fail "bench --json failed"; }
  [ "$(wc -l < "$work/out.json")" -eq 1 ] || fail "stdout is not one line: $(cat "$work/out.json")"
  grep -q '^{"framework":"ingot",.*"batch_size":8,.*"memory":{"step_peak_bytes":' "$work/out.json" \
    || fail "unexpected JSON: $(cat "$work/out.json")"
  if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["train"]["images_per_s"]["median"] > 0, d' \
      "$work/out.json" || fail "python cannot read the JSON"
  fi
  grep -q 'bench: mlp' "$work/err.txt" || fail "no progress line on stderr"
  # reduced-precision inference is labelled as such
  "$ingot" bench "${tiny[@]}" --json --infer-dtype bf16 > "$work/bf16.json" 2> "$work/err.txt" \
    || { cat "$work/err.txt"; fail "bench --infer-dtype bf16 failed"; }
  grep -q '"dtype":"f32","infer_dtype":"bf16"' "$work/bf16.json" || fail "bf16 run not labelled: $(cat "$work/bf16.json")"
  ;;
table)
  "$ingot" bench "${tiny[@]}" --profile="$work/prof" --save-init "$work/init.safetensors" > "$work/out.txt" 2>&1 \
    || { cat "$work/out.txt"; fail "bench failed"; }
  for k in 'train images/s' 'infer ms/batch' 'latency b1 ms' 'peak RSS'; do
    grep -q "$k" "$work/out.txt" || fail "table lacks '$k': $(cat "$work/out.txt")"
  done
  [ -s "$work/prof/profile.txt" ] && [ -s "$work/prof/trace.json" ] || fail "no profile files"
  grep -q 'adam' "$work/prof/profile.txt" || fail "profile lacks the optimizer op"
  [ -s "$work/init.safetensors" ] || fail "no initial weights"
  ;;
scaling)
  # the largest batch whose training step stays within the limit: it fits, the next one does not
  "$ingot" bench "${tiny[@]}" --json --scaling 300KiB > "$work/out.json" 2> "$work/err.txt" \
    || { cat "$work/err.txt"; fail "bench --scaling failed"; }
  /usr/bin/python3 - "$work/out.json" <<'PY' || fail "scaling: $(cat "$work/out.json")"
import json, sys
s = json.load(open(sys.argv[1]))["scaling"]
assert s["memory_limit_bytes"] == 300 * 1024, s
assert s["max_batch"] > 16 and s["next_batch"] == s["max_batch"] + 1, s
assert s["peak_bytes"] <= s["memory_limit_bytes"] < s["next_peak_bytes"], s
PY
  "$ingot" bench "${tiny[@]}" --scaling 300KiB > "$work/out.txt" 2>&1 || fail "bench --scaling (table) failed"
  grep -q 'scaling: the largest training batch within 0.3 MiB is' "$work/out.txt" || fail "table: $(cat "$work/out.txt")"
  ;;
run_profile)
  "$ingot" run --profile tests/pipeline/configs/tiny_mlp.yaml --runs-dir "$work/runs" > "$work/out.txt" 2>&1 \
    || { cat "$work/out.txt"; fail "run --profile failed"; }
  run="$work/runs/tiny_mlp"
  [ -s "$run/profile.txt" ] && [ -s "$run/trace.json" ] || fail "no profile in the run folder"
  for k in 'data  *step' 'forward  *step' 'optimizer  *step' 'matmul  *op' 'Backward  *backward'; do
    grep -Eq "$k" "$run/profile.txt" || fail "profile lacks '$k': $(cat "$run/profile.txt")"
  done
  if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))["traceEvents"][0]["dur"]' "$run/trace.json" \
      || fail "trace.json does not parse"
  fi
  ;;
*) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
