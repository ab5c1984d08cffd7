#!/bin/bash
# A training run on a fake accelerator (fixture_train_device: device kind CUDA, host memory, a few
# element-wise ops of its own): the model and batches live on the device, the backend runs ops
# (ops_by_backend), the losses equal the CPU run's, the records name the device, and a device
# index the backend does not serve is refused with exit 3, and a run bigger than the device's
# memory is refused before it starts.
# Usage: device_training.sh INGOT_BINARY FIXTURE_DIR
set -euo pipefail
ingot=$1
fixture_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
config=tests/plugins/configs/device_train.yaml
losses() { grep '"event":"train_step"' "$1" | sed -E 's/.*"step":([0-9]+).*"loss":([^,}]+).*/\1 \2/'; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

"$ingot" run $config --set backend=cpu --runs-dir "$work/cpu" > "$work/cpu.txt" 2>&1 || { cat "$work/cpu.txt"; fail "cpu run"; }
INGOT_PLUGIN_PATH=$fixture_dir "$ingot" run $config --set backend=cuda --runs-dir "$work/dev" > "$work/dev.txt" 2>&1 ||
  { cat "$work/dev.txt"; fail "device run"; }
summary=$work/dev/device_train/summary.json
[ "$(field "$summary" "['device']")" = "cuda:0" ] || fail "summary device: $(cat "$summary")"
ran=$(field "$summary" "['ops_by_backend'].get('train_device', 0)")
[ "$ran" -gt 0 ] || fail "train_device ran no op: $(cat "$summary")"
grep -q '"event":"epoch".*"device":"cuda:0"' "$work/dev/device_train/metrics.jsonl" || fail "epoch records lack the device"
grep -q "model: .* parameters on cuda:0" "$work/dev.txt" || fail "the run did not say where the model is"
grep -q "^memory: about .* 1.0 GiB available on cuda:0 (backend train_device memory_info)" "$work/dev.txt" ||
  fail "the memory line: $(grep '^memory' "$work/dev.txt")"
python3 - "$work/cpu/device_train/metrics.jsonl" "$work/dev/device_train/metrics.jsonl" <<'PY' || fail "losses differ"
import json, sys
def losses(path):
    return [json.loads(l)["loss"] for l in open(path) if '"event":"train_step"' in l]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
assert len(a) == len(b) == 32, (len(a), len(b))
worst = max(abs(x - y) / max(abs(x), 1e-6) for x, y in zip(a, b))
print("largest relative loss difference, cpu vs device:", worst)
assert worst <= 1e-5, worst
PY

INGOT_PLUGIN_PATH=$fixture_dir "$ingot" run $config --set backend=cuda:1 --runs-dir "$work/dev1" > "$work/dev1.txt" 2>&1 ||
  { cat "$work/dev1.txt"; fail "cuda:1 run"; }
[ "$(field "$work/dev1/device_train/summary.json" "['device']")" = "cuda:1" ] || fail "cuda:1 summary"

set +e
INGOT_PLUGIN_PATH=$fixture_dir "$ingot" run $config --set backend=cuda:2 --runs-dir "$work/dev2" > "$work/dev2.txt" 2>&1
code=$?
set -e
[ $code -eq 3 ] || fail "cuda:2: exit $code, expected 3: $(cat "$work/dev2.txt")"
grep -q "backend cuda:2: there is no such device: backend train_device serves 2 device(s)" "$work/dev2.txt" ||
  fail "$(cat "$work/dev2.txt")"
# A device too small for the run's estimate: refused before the run folder exists.
set +e
INGOT_FIXTURE_DEVICE_MB=0.01 INGOT_PLUGIN_PATH=$fixture_dir "$ingot" run $config --set backend=cuda --runs-dir "$work/small" \
  > "$work/small.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "small device: exit $code, expected 2: $(cat "$work/small.txt")"
grep -q "ingot: error: not enough memory on cuda:0: training needs about .* but 10.2 KiB is available" "$work/small.txt" ||
  fail "$(cat "$work/small.txt")"
[ ! -e "$work/small/device_train" ] || fail "the refused run created its folder"
echo "device training: ok ($ran ops on train_device)"
