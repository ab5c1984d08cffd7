#!/bin/bash
# Memory in `ingot run`, end to end: the progress lines end with "mem A/P MiB", every train_step
# and epoch record has mem_allocated_mb / mem_reserved_mb / mem_peak_mb (peak >= allocated, no
# record's peak above the run's in summary.json), and --memory-report prints the report and
# writes runs/<name>/memory.md (stage table, largest tensors); without the flag there is none.
# On the fake accelerator the report has the device's and the host's columns.
# Usage: memory_flows.sh INGOT_BINARY cpu | device FIXTURE_DIR
set -euo pipefail
ingot=$1
flow=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Every train_step / epoch record carries the three fields, consistent with each other and with
# the summary's run peak ($2: the summary key of the model's device).
check_records() {
  python3 - "$1/metrics.jsonl" "$1/summary.json" "$2" <<'PY' || fail "metrics: see above"
import json, sys
records = [json.loads(l) for l in open(sys.argv[1])]
summary = json.load(open(sys.argv[2]))
run_peak = summary[sys.argv[3]] / 2**20 if sys.argv[3] in summary else None
steps = [r for r in records if r["event"] in ("train_step", "epoch")]
assert steps, "no train_step or epoch record"
for r in steps:
    for k in ("mem_allocated_mb", "mem_reserved_mb", "mem_peak_mb"):
        assert isinstance(r.get(k), (int, float)), f"{k} missing in {r}"
    assert r["mem_peak_mb"] + 1e-3 >= r["mem_allocated_mb"] > 0, r
    assert r["mem_reserved_mb"] + 1e-3 >= r["mem_allocated_mb"], r
    if run_peak is not None:
        assert r["mem_peak_mb"] <= run_peak + 1e-3, (r, run_peak)
assert not any("mem_allocated_mb" in r for r in records if r["event"] in ("eval", "summary"))
PY
}

case "$flow" in
cpu)
  config=tests/pipeline/configs/tiny_mlp.yaml
  "$ingot" run $config --runs-dir "$work/a" --memory-report > "$work/a.txt" 2>&1 || { cat "$work/a.txt"; fail "run"; }
  run=$work/a/tiny_mlp
  grep -qE "^epoch 1/3 .* ETA [0-9:]+  mem [0-9.]+/[0-9.]+ MiB$" "$work/a.txt" || fail "progress lines: $(head -20 "$work/a.txt")"
  grep -qE "^epoch 3/3 done .*  mem [0-9.]+/[0-9.]+ MiB$" "$work/a.txt" || fail "the epoch's last line: $(cat "$work/a.txt")"
  check_records "$run" peak_host_bytes
  [ -s "$run/memory.md" ] || fail "no memory.md"
  for want in "# Memory of run tiny_mlp" "| stage | cpu peak allocated | cpu peak reserved |" "| setup | " \
              "| train | " "| evaluate | " "| save | " "## Largest tensors at the peak on cpu: " \
              "| 1 | " "| 10 | " "matmul output" "[512, 1, 8, 8] | float32 |"; do
    grep -qF "$want" "$run/memory.md" || fail "memory.md lacks '$want': $(cat "$run/memory.md")"
  done
  grep -qF "# Memory of run tiny_mlp" "$work/a.txt" || fail "the report was not printed"
  grep -qF "(written to $run/memory.md)" "$work/a.txt" || fail "where the report went"
  # Without the flag: the records and the progress bar show memory, no report.
  "$ingot" run $config --runs-dir "$work/b" --set train.epochs=1 > "$work/b.txt" 2>&1 || { cat "$work/b.txt"; fail "run"; }
  [ ! -e "$work/b/tiny_mlp/memory.md" ] || fail "a report without --memory-report"
  ! grep -qF "# Memory of run" "$work/b.txt" || fail "a report printed without --memory-report"
  check_records "$work/b/tiny_mlp" peak_host_bytes
  echo "memory flows (cpu): ok"
  ;;
device)
  fixture_dir=$3
  config=tests/plugins/configs/device_train.yaml
  INGOT_PLUGIN_PATH=$fixture_dir "$ingot" run $config --set backend=cuda --runs-dir "$work" --memory-report \
    > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "device run"; }
  run=$work/device_train
  check_records "$run" peak_device_bytes
  for want in "| stage | cuda:0 peak allocated | cuda:0 peak reserved | cpu peak allocated | cpu peak reserved |" \
              "## Largest tensors at the peak on cuda:0: " "## Largest tensors at the peak on cpu: " "[16, 1, 4, 4] | float32 |"; do
    grep -qF "$want" "$run/memory.md" || fail "memory.md lacks '$want': $(cat "$run/memory.md")"
  done
  echo "memory flows (device): ok"
  ;;
*)
  fail "unknown flow $flow"
  ;;
esac
