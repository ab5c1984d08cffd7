#!/bin/bash
# `ingot run` with the distill extension: train a CNN, distill a smaller MLP from it, evaluate and
# save. The saved model must be the student, metrics.jsonl must hold `distill` records with both
# loss terms, and the student must learn. A second run distills from the first run's folder with
# alpha 0 (the student alone): its teacher is that run's checkpoint (its model.safetensors is the
# student), the teacher never runs and no soft-target term is logged.
# Usage: distill_pipeline.sh INGOT_BINARY EXTENSION_DIR
set -euo pipefail
ingot=$1
ext_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
config() {  # config NAME TEACHER ALPHA
  sed -e "s|^name: .*|name: $1|" -e "s|TEACHER|$2|" -e "s|ALPHA|$3|" tests/compress/configs/distill_pipeline.yaml \
    > "$work/$1.yaml"
}
# The shapes of every tensor in a safetensors file, one "name [d, ...]" per line, sorted.
shapes() {
  python3 -c 'import json,struct,sys
f=open(sys.argv[1],"rb"); n=struct.unpack("<Q",f.read(8))[0]; h=json.loads(f.read(n))
print("\n".join(sorted(k+" "+str(v["shape"]) for k,v in h.items() if k!="__metadata__")))' "$1"
}
student_shapes=$'1.bias [16]\n1.weight [16, 64]\n3.bias [4]\n3.weight [4, 16]'

config distill current 0.9
INGOT_EXTENSION_PATH=$ext_dir "$ingot" run "$work/distill.yaml" --runs-dir "$work/runs" > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "run failed"; }
run="$work/runs/distill"
grep -q "distill: student 1108 params from teacher [0-9]* params, T=4, alpha=0.9" "$work/out.txt" ||
  fail "no stage note: $(cat "$work/out.txt")"
[ "$(shapes "$run/model.safetensors")" == "$student_shapes" ] ||
  fail "the saved model is not the student: $(shapes "$run/model.safetensors")"
records=$(grep -c '"event":"distill",' "$run/metrics.jsonl" || true)
[ "$records" -ge 8 ] || fail "expected >= 8 distill records (32 steps, log_every 4), got $records"
distill_records() { grep '"event":"distill",' "$1/metrics.jsonl" || true; }
distill_records "$run" | grep -vq '"kd_loss":[0-9.e-]*,"ce_loss":[0-9.e-]*,' &&
  fail "a distill record lacks a numeric kd_loss or ce_loss: $(distill_records "$run" | head -2)"
grep -q '"event":"distill_end"' "$run/metrics.jsonl" || fail "no distill_end record"
grep -Eq "evaluate: 64 samples  accuracy (9[0-9]|100)\." "$work/out.txt" ||
  fail "the student did not learn: $(grep evaluate "$work/out.txt")"

# predict and export read the distilled run as the student (the distill stage rebuilds it).
INGOT_EXTENSION_PATH=$ext_dir "$ingot" export "$run" --format onnx -o "$work/student.onnx" > "$work/export.txt" 2>&1 ||
  { cat "$work/export.txt"; fail "export of the distilled run"; }
grep -q "input \[N, 1, 8, 8\] f32, output \[N, 4\] logits" "$work/export.txt" || fail "export line: $(cat "$work/export.txt")"
/usr/bin/python3 -c 'import sys, numpy as np
np.save(sys.argv[1], np.random.RandomState(1).normal(size=(5, 1, 8, 8)).astype(np.float32))' "$work/x.npy"
INGOT_EXTENSION_PATH=$ext_dir "$ingot" predict "$run" "$work/x.npy" > "$work/predict.txt" 2>&1 ||
  { cat "$work/predict.txt"; fail "predict on the distilled run"; }
[ "$(grep -c '^.*x.npy\[' "$work/predict.txt")" -eq 5 ] || fail "predict rows: $(cat "$work/predict.txt")"

# The student alone (alpha 0), the teacher named by its run folder.
config alone "$run" 0
INGOT_EXTENSION_PATH=$ext_dir "$ingot" run "$work/alone.yaml" --runs-dir "$work/runs" > "$work/alone.txt" 2>&1 ||
  { cat "$work/alone.txt"; fail "the alpha 0 run failed"; }
grep -q "alpha=0 (teacher: $run/checkpoints/epoch-002.safetensors)" "$work/alone.txt" ||
  fail "not the first run's checkpoint as the teacher: $(grep 'distill:' "$work/alone.txt")"
grep -q "teacher ran 0 times" "$work/alone.txt" ||
  fail "the teacher ran with alpha 0: $(grep 'distill:' "$work/alone.txt")"
distill_records "$work/runs/alone" | grep -q '"kd_loss":null,"ce_loss":[0-9]' ||
  fail "alpha 0: expected kd_loss null and a ce_loss: $(distill_records "$work/runs/alone" | head -2)"
[ "$(shapes "$work/runs/alone/model.safetensors")" == "$student_shapes" ] ||
  fail "alpha 0: the saved model is not the student"
echo "distill pipeline: ok"
