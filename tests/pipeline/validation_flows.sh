#!/bin/bash
# Validation split, best checkpoint and early stopping, end to end:
# - per-epoch evaluation runs on data.validation (80 of the 400 training samples), logged with
#   split "validation"; the test split is evaluated once, at the end;
# - checkpoints/best.safetensors holds the best epoch; early stopping ends training after
#   `patience` epochs without improvement and restores the best weights (model.safetensors = best);
# - the tracker's state travels in checkpoints: a resume that extends train.epochs stops where an
#   uninterrupted run would (epoch 4), not 3 epochs after the resume;
# - early stopping without a validation split is refused with one line naming the key.
# Usage: validation_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
config=tests/pipeline/configs/tiny_mlp_validation.yaml
run=$work/tiny_mlp_validation

# 3 epochs, patience 3: epoch 1 is the best, epochs 2 and 3 do not improve; no stop yet.
"$ingot" run $config --runs-dir "$work" > "$work/out1.txt" 2>&1 || { cat "$work/out1.txt"; fail "first run"; }
grep -q "^data: 320 train / 80 validation / 96 test samples" "$work/out1.txt" || fail "the data line does not count the validation split"
[ "$(grep -c '^validate: 80 samples' "$work/out1.txt")" -eq 3 ] || { cat "$work/out1.txt"; fail "three validations of 80 samples"; }
[ "$(grep -c '^evaluate: 96 samples' "$work/out1.txt")" -eq 1 ] || fail "the test split is evaluated once"
grep -q "best val_loss so far: checkpoints/best.safetensors" "$work/out1.txt" || fail "no best line"
[ -f "$run/checkpoints/best.safetensors" ] || fail "no checkpoints/best.safetensors"
grep -q "early stopping" "$work/out1.txt" && fail "stopped early in the first run"

# Extended to 8 epochs: the count carried over (2 epochs without improvement) ends it at epoch 4.
"$ingot" run $config --runs-dir "$work" --resume train.epochs=8 > "$work/out2.txt" 2>&1 ||
  { cat "$work/out2.txt"; fail "resume"; }
grep -q "early stopping: val_loss did not improve for 3 epochs; the best was epoch 1" "$work/out2.txt" ||
  { cat "$work/out2.txt"; fail "no early stop at epoch 4"; }
grep -q "early stopping: restored the weights of epoch 1" "$work/out2.txt" || fail "best weights not restored"
[ "$(grep -c '^validate: ' "$work/out2.txt")" -eq 1 ] || { cat "$work/out2.txt"; fail "the resume validated more than epoch 4"; }

/usr/bin/python3 - "$run" <<'PY' || fail "records / weights: see above"
import json, os, struct, sys
run = sys.argv[1]

def tensors(path):  # safetensors: name -> raw bytes
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: data[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in header.items() if k != "__metadata__"}

records = [json.loads(l) for l in open(os.path.join(run, "metrics.jsonl"))]
evals = [r for r in records if r["event"] == "eval"]
val = [r for r in evals if r.get("split") == "validation"]
test = [r for r in evals if r.get("split") == "test"]
assert [r["epoch"] for r in val] == [1, 2, 3, 4], [r["epoch"] for r in val]
assert [r["best"] for r in val] == [True, False, False, False], val
assert all(r["samples"] == 80 for r in val)
assert len(test) == 2 and all(r["samples"] == 96 for r in test), test  # once per invocation, at its end
stops = [r for r in records if r["event"] == "early_stop"]
assert len(stops) == 1 and stops[0]["epoch"] == 4 and stops[0]["best_epoch"] == 1, stops
summary = json.load(open(os.path.join(run, "summary.json")))
assert summary["stopped_early_at_epoch"] == 4 and summary["best_epoch"] == 1, summary
assert abs(summary["best_val_loss"] - val[0]["loss"]) < 1e-9, summary
assert summary["best_checkpoint"].endswith("checkpoints/best.safetensors"), summary
# model.safetensors holds the best epoch's weights, not the last epoch's.
best = tensors(os.path.join(run, "checkpoints", "best.safetensors"))
final = tensors(os.path.join(run, "model.safetensors"))
last = tensors(os.path.join(run, "checkpoints", "epoch-004.safetensors"))
assert set(final) == {k[len("model/"):] for k in best if k.startswith("model/")}
assert all(final[k] == best["model/" + k] for k in final), "model.safetensors is not the best epoch"
assert any(final[k] != last["model/" + k] for k in final), "the last epoch equals the best: the test cannot tell"
print("validation flows: records, summary and weights ok")
PY

# Early stopping without a validation split: one line naming the key, exit 2 (a config error).
grep -v "validation: {fraction" $config > "$work/no_validation.yaml"
set +e
"$ingot" run "$work/no_validation.yaml" --runs-dir "$work/b" > /dev/null 2> "$work/out3.txt"
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$work/out3.txt"; fail "exit $rc, want 2"; }
[ "$(grep -c . "$work/out3.txt")" -eq 1 ] || { cat "$work/out3.txt"; fail "more than one line"; }
grep -q "train.early_stopping.*add data.validation: {fraction: 0.1}" "$work/out3.txt" || { cat "$work/out3.txt"; fail "message"; }
grep -q "best on validation</th><td>epoch 1, val_loss" "$run/report.html" || fail "report.html does not show the best epoch"
echo "validation flows: ok"
