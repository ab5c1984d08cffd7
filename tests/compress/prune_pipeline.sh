#!/bin/bash
# `ingot run` with the prune extension. 1: train a CNN, remove half of its filters (ln_structured)
# with 8 fine-tuning steps, evaluate, save: the saved tensors must have the smaller shapes, the
# model must still classify, and the stage table must carry the stage's note. 2: the gradual_prune
# callback during training: the saved weights must be 80% zeros (one global threshold) at their
# full shapes. 3: a bad amount and an unknown layer name: exit 2, one clear line.
# Usage: prune_pipeline.sh INGOT_BINARY EXTENSION_DIR
set -euo pipefail
ingot=$1
export INGOT_EXTENSION_PATH=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# "name [d, ...]" per tensor of a safetensors file, sorted.
shapes() {
  python3 -c 'import json,struct,sys
f=open(sys.argv[1],"rb"); n=struct.unpack("<Q",f.read(8))[0]; h=json.loads(f.read(n))
print("\n".join(sorted(k+" "+str(v["shape"]) for k,v in h.items() if k!="__metadata__")))' "$1"
}
# "zeros total" over the f32 tensors named *weight of a safetensors file.
weight_zeros() {
  python3 -c 'import json,struct,sys
raw=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",raw[:8])[0]; h=json.loads(raw[8:8+n]); z=t=0
for k,v in h.items():
    if k=="__metadata__" or not k.endswith("weight"): continue
    b,e=v["data_offsets"]; vals=struct.unpack("<%df"%((e-b)//4), raw[8+n+b:8+n+e])
    z+=sum(1 for x in vals if x==0.0); t+=len(vals)
print(z, t)' "$1"
}

# 1. structured pruning in the pipeline; predict and export on its saved (smaller) model
"$ingot" run tests/compress/configs/prune_pipeline.yaml --runs-dir "$work/runs" > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "run failed"; }
run="$work/runs/prune_pipeline"
want=$'0.weight [2, 1, 3, 3]\n1.bias [2]\n1.num_batches_tracked []\n1.running_mean [2]\n1.running_var [2]\n1.weight [2]
4.weight [4, 2, 3, 3]\n5.bias [4]\n5.num_batches_tracked []\n5.running_mean [4]\n5.running_var [4]\n5.weight [4]
9.bias [8]\n9.weight [8, 16]\n12.bias [4]\n12.weight [4, 8]'
[ "$(shapes "$run/model.safetensors")" == "$(sort <<< "$want")" ] ||
  fail "the saved model did not shrink as expected: $(shapes "$run/model.safetensors")"
grep -q "prune: 4  *Conv2d  *\[8, 4, 3, 3\] -> \[4, 2, 3, 3\]" "$work/out.txt" || fail "no per-layer report: $(cat "$work/out.txt")"
grep -q "prune: L2 structured 50%: 2 convs and 1 linear shrunk; parameters" "$work/out.txt" || fail "no summary line"
grep -q "prune: 12 keeps its outputs: the model's output layer" "$work/out.txt" || fail "the output layer's reason is missing"
grep -q "L2 structured 50%, 8 steps fine-tuning: 2 convs and 1 linear shrunk" "$run/compression.md" ||
  fail "no stage note in compression.md: $(cat "$run/compression.md")"
grep -q '"stage":"prune"' "$run/metrics.jsonl" || fail "no fine-tuning records of the prune stage"
# predict and export read the shrunk model (the prune stage rebuilds the smaller layers).
/usr/bin/python3 -c 'import sys, numpy as np
np.save(sys.argv[1], np.random.RandomState(3).normal(size=(4, 1, 8, 8)).astype(np.float32))' "$work/x.npy"
"$ingot" predict "$run" "$work/x.npy" > "$work/predict.txt" 2>&1 || { cat "$work/predict.txt"; fail "predict on the pruned run"; }
[ "$(grep -c 'x.npy\[' "$work/predict.txt")" -eq 4 ] || fail "predict rows: $(cat "$work/predict.txt")"
"$ingot" export "$run" --format onnx -o "$work/pruned.onnx" > "$work/export.txt" 2>&1 ||
  { cat "$work/export.txt"; fail "export of the pruned run"; }
grep -Eq "evaluate: 64 samples  accuracy (9[0-9]|100)\." "$work/out.txt" ||
  fail "the pruned model does not classify: $(grep evaluate "$work/out.txt")"

# 2. gradual pruning as a train callback
"$ingot" run tests/compress/configs/prune_gradual.yaml --runs-dir "$work/runs" > "$work/out2.txt" 2>&1 ||
  { cat "$work/out2.txt"; fail "gradual run failed"; }
run="$work/runs/prune_gradual"
[ "$(shapes "$run/model.safetensors")" == $'1.bias [32]\n1.weight [32, 64]\n3.bias [4]\n3.weight [4, 32]' ] ||
  fail "unstructured pruning changed shapes: $(shapes "$run/model.safetensors")"
[ "$(weight_zeros "$run/model.safetensors")" == "1741 2176" ] ||
  fail "expected 1741 of 2176 weights zero (80%), got $(weight_zeros "$run/model.safetensors")"
grep -q "gradual_prune (train): global L1 80%: 1741 of 2176 weights in 2 layers are zero (80.0%); unstructured" \
  "$work/out2.txt" || fail "no gradual_prune summary: $(cat "$work/out2.txt")"
grep -Eq "evaluate: 64 samples  accuracy (9[0-9]|100)\." "$work/out2.txt" ||
  fail "the gradually pruned model does not classify: $(grep evaluate "$work/out2.txt")"

# 3. bad configs: exit 2 with one line saying what and where
bad() {  # bad NAME SED_EXPRESSION EXPECTED_TEXT
  sed -e "s|^name: .*|name: $1|" -e "$2" tests/compress/configs/prune_pipeline.yaml > "$work/$1.yaml"
  set +e
  "$ingot" run "$work/$1.yaml" --runs-dir "$work/runs" > "$work/$1.txt" 2>&1
  code=$?
  set -e
  [ $code -eq 2 ] || fail "$1: exit $code, expected 2: $(tail -3 "$work/$1.txt")"
  grep -q "$3" "$work/$1.txt" || fail "$1: no '$3' in: $(tail -3 "$work/$1.txt")"
}
bad bad_amount "s|amount: 0.5|amount: 1.5|" "'prune.amount' must be a fraction in \[0, 1\]"
bad bad_layer "s|    n: 2|    n: 2\n    layers: [0, conv9]|; s|  - train||" "no layer 'conv9' in the model; the model's Conv2d and Linear layers are: 0, 4, 9, 12"
echo "prune pipeline: ok"
