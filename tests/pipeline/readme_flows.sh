#!/bin/bash
# The README's three commands (folders of PNGs -> a trained run -> predictions -> an ONNX file), run
# as the README writes them, in a fresh folder holding only images/ made here: the run
# trains to over 90% test accuracy, predict lists every test image, export writes a model whose
# metadata names the classes, and onnxruntime (where the test venv has it) agrees with predict.
# Usage: readme_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$(realpath "$1")
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The commands between the README's marker and the end of its code block.
mapfile -t commands < <(awk '/the three commands: tests\/pipeline\/readme_flows.sh/ { on = 1; next }
  on && /^```sh/ { block = 1; next } block && /^```/ { exit } block { print }' README.md)
[ "${#commands[@]}" -eq 3 ] || fail "expected 3 commands in the README, found ${#commands[@]}: ${commands[*]}"

# No configs/ there: `ingot run configs/image_folder.yaml` finds the shipped one (the source tree's,
# for the build's binary), as the README says.
/usr/bin/python3 tests/pipeline/make_pngs.py "$work/images" 40 10
cd "$work"
for c in "${commands[@]}"; do
  [[ "$c" == "ingot "* ]] || fail "not an ingot command: $c"
  read -ra words <<< "${c#ingot }"
  "$ingot" "${words[@]}" > out.txt 2>&1 || { cat out.txt; fail "'$c' failed"; }
  cat out.txt >> all.txt
done

grep -qE "^evaluate: 30 samples  accuracy (9[0-9]|100)\." all.txt || fail "accuracy: $(grep evaluate all.txt)"
[ "$(grep -c '^validate: 12 samples' all.txt)" -ge 1 ] || fail "no validation"
[ -f runs/image_folder/report.html ] || fail "no report.html"
[ "$(wc -l < predictions.csv)" -eq 31 ] || fail "predictions.csv: $(wc -l < predictions.csv) lines"
[ -s model.onnx ] || fail "no model.onnx"
# Samples as an array too (floats in [0, 1], as decoded images are), for the comparison below.
/usr/bin/python3 -c 'import numpy as np
np.save("x.npy", np.random.RandomState(2).uniform(0, 1, (8, 3, 32, 32)).astype(np.float32))'
"$ingot" predict runs/image_folder x.npy -o x.csv 2> /dev/null || fail "predict on x.npy"
python="${INGOT_BUILD_DIR:-$root/build}/test-venv/bin/python"
if [ -x "$python" ] && "$python" -c "import onnxruntime" 2> /dev/null; then
  "$python" - <<'PY' || fail "onnxruntime disagrees with predict"
import csv, json
import numpy as np, onnx, onnxruntime as ort
model = onnx.load("model.onnx")
meta = {p.key: p.value for p in model.metadata_props}
assert json.loads(meta["class_names"]) == ["bars", "columns", "frame"], meta
rows = list(csv.DictReader(open("predictions.csv")))
agree = sum(r["input"].split("/")[-2] == r["name"] for r in rows)
assert agree >= 27, agree
# onnxruntime on the same samples, normalised as the metadata says, gives predict's probabilities.
mean, std = float(json.loads(meta["normalize_mean"])[0]), float(json.loads(meta["normalize_std"])[0])
x = (np.load("x.npy") - mean) / std
logits = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
p = np.exp(logits - logits.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
for i, r in enumerate(csv.DictReader(open("x.csv"))):
    assert int(r["class"]) == int(p[i].argmax()) and abs(float(r["probability"]) - p[i].max()) < 1e-4, (i, r, p[i])
print(f"readme flows: {agree} of 30 predictions name their folder; model.onnx has the class names")
PY
else
  skip="onnxruntime not installed (scripts/test installs it in build/test-venv)"
fi
echo "readme flows: ok"
[ -z "${skip:-}" ] || echo "INGOT_SKIP: $skip (the three commands ran)"
