#!/bin/bash
# `ingot export` end to end: a CNN built from layers (synthetic images) and an MLP on a CSV table
# with class names and a normalisation are trained for a few steps, exported as ONNX, and run by
# onnxruntime (the test venv's) on test samples normalised as the file's metadata says; the top
# class and its probability agree with `ingot predict -o` (4 decimals); the metadata carries the
# class names; an unknown --format is one error line; bash completion knows the command.
# Usage: export_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A bad --format needs no venv: exit 2, one line naming the formats.
"$ingot" export runs/none --format tflite -o "$work/m.tflite" > "$work/bad.txt" 2>&1 && fail "--format tflite was accepted"
[ "$(wc -l < "$work/bad.txt")" -eq 1 ] || fail "bad --format: $(cat "$work/bad.txt")"
grep -q "unknown export format; formats: onnx" "$work/bad.txt" || fail "bad --format: $(cat "$work/bad.txt")"

# Bash completion knows the command and its options.
(
  source scripts/completion/ingot.bash
  COMP_WORDS=(ingot exp); COMP_CWORD=1; _ingot
  [[ "${COMPREPLY[*]}" == "export" ]] || fail "completion of 'exp': ${COMPREPLY[*]}"
  COMP_WORDS=(ingot export runs/x --fo); COMP_CWORD=3; _ingot
  [[ "${COMPREPLY[*]}" == "--format" ]] || fail "completion of 'export --fo': ${COMPREPLY[*]}"
  COMP_WORDS=(ingot export runs/x --format ""); COMP_CWORD=4; _ingot
  [[ "${COMPREPLY[*]}" == "onnx" ]] || fail "completion of 'export --format': ${COMPREPLY[*]}"
)

# A Fashion-MNIST run (the shipped MLP, 3 steps): predict on the test IDX file and export read its
# config.resolved.yaml back (a resolved data section that failed the schema once broke both).
"$ingot" run configs/fashion_mnist_mlp.yaml --runs-dir "$work/runs" train.steps=3 data.workers=0 \
  > "$work/fm.txt" 2>&1 || fail "fashion_mnist_mlp: $(tail -5 "$work/fm.txt")"
"$ingot" predict "$work/runs/fashion_mnist_mlp" /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz \
  -o "$work/fm.csv" 2> "$work/fm_predict.txt" || fail "predict on a fashion_mnist run: $(cat "$work/fm_predict.txt")"
[ "$(wc -l < "$work/fm.csv")" -eq 10001 ] || fail "predict on the 10000 test images: $(wc -l < "$work/fm.csv") lines"
"$ingot" export "$work/runs/fashion_mnist_mlp" --format onnx -o "$work/fm.onnx" > "$work/fm_export.txt" 2>&1 ||
  fail "export of a fashion_mnist run: $(cat "$work/fm_export.txt")"
grep -q "10 classes (T-shirt/top, Trouser," "$work/fm_export.txt" || fail "class names: $(cat "$work/fm_export.txt")"

python="${INGOT_BUILD_DIR:-build}/test-venv/bin/python"
if [ ! -x "$python" ] || ! "$python" -c 'import onnxruntime, onnx, numpy' 2> /dev/null; then
  echo "INGOT_SKIP: onnxruntime not installed (scripts/test installs it in build/test-venv)"
  exit 0
fi

# check_run RUN SAMPLES.npy: export, then onnxruntime vs `ingot predict -o` on the samples.
check_run() {
  local run=$1 samples=$2 name
  name=$(basename "$run")
  "$ingot" export "$run" --format onnx -o "$work/$name.onnx" > "$work/export.txt" 2> "$work/export.err" ||
    fail "export $name: $(cat "$work/export.err")"
  [ "$(wc -l < "$work/export.txt")" -eq 1 ] || fail "export printed: $(cat "$work/export.txt")"
  grep -q "$work/$name.onnx (ONNX opset 17" "$work/export.txt" || fail "export line: $(cat "$work/export.txt")"
  "$ingot" predict "$run" "$samples" -o "$work/$name.csv" > /dev/null 2>&1 || fail "predict $name"
  "$python" - "$work/$name.onnx" "$samples" "$work/$name.csv" <<'PY' || fail "onnxruntime disagrees with predict on $name"
import csv, json, sys
import numpy as np, onnx, onnxruntime as ort
model_path, samples, predictions = sys.argv[1:4]
onnx.checker.check_model(onnx.load(model_path), full_check=True)
session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
meta = session.get_modelmeta().custom_metadata_map
mean = np.array(json.loads(meta["normalize_mean"]), np.float32).reshape(-1, 1, 1)
std = np.array(json.loads(meta["normalize_std"]), np.float32).reshape(-1, 1, 1)
x = (np.load(samples).astype(np.float32) - mean) / std
logits = session.run(["logits"], {"input": x})[0]
p = np.exp(logits - logits.max(1, keepdims=True))
p /= p.sum(1, keepdims=True)
names = json.loads(meta["class_names"])
rows = list(csv.DictReader(open(predictions)))
assert len(rows) == len(x), (len(rows), len(x))
for i, row in enumerate(rows):
    top = int(p[i].argmax())
    assert top == int(row["class"]) and names[top] == row["name"], (i, top, row)
    assert abs(p[i, top] - float(row["probability"])) < 1e-4, (i, p[i, top], row["probability"])
print(f"{model_path}: {len(rows)} samples agree with predict; classes {names}")
PY
}

# 1. The CNN on synthetic images (raw values in [0, 1], no normalisation for synthetic data).
"$ingot" run tests/pipeline/configs/export_cnn.yaml --runs-dir "$work/runs" > "$work/run.txt" 2>&1 ||
  fail "train export_cnn: $(tail -5 "$work/run.txt")"
"$python" -c "import numpy as np; np.save('$work/images.npy', np.random.default_rng(1).random((20, 1, 8, 8), np.float32))"
check_run "$work/runs/export_cnn" "$work/images.npy"

# 2. The MLP on a CSV table of three named species, normalised with data.normalize.
awk 'BEGIN {
  srand(3); split("setosa versicolor virginica", name, " ");
  print "sepal_length,sepal_width,petal_length,petal_width,species";
  for (i = 0; i < 120; i++) {
    c = i % 3;
    printf "%.3f,%.3f,%.3f,%.3f,%s\n", 2*c + 1.6*(rand()-0.5), -2*c + 1.6*(rand()-0.5), c + 1.6*(rand()-0.5),
           1 + 1.6*(rand()-0.5), name[c+1];
  }
}' > "$work/table.csv"
"$ingot" run tests/pipeline/configs/own_csv.yaml --set data.csv.train="$work/table.csv" --set data.csv.test="$work/table.csv" \
  --set train.epochs=2 --set data.normalize.mean=1.0 --set data.normalize.std=2.0 --runs-dir "$work/runs" \
  > "$work/run.txt" 2>&1 || fail "train own_csv: $(tail -5 "$work/run.txt")"
"$python" -c "import numpy as np; np.save('$work/rows.npy', np.random.default_rng(2).normal(1.0, 2.0, (15, 4, 1, 1)).astype(np.float32))"
check_run "$work/runs/own_csv" "$work/rows.npy"
"$python" -c "
import onnx, sys
meta = {p.key: p.value for p in onnx.load('$work/own_csv.onnx').metadata_props}
assert meta['class_names'] == '[\"setosa\",\"versicolor\",\"virginica\"]', meta
assert meta['normalize_mean'] == '[1]' and meta['normalize_std'] == '[2]', meta
assert meta['run'] == 'own_csv', meta
" || fail "metadata of own_csv.onnx"
echo "export flows: ok"
