#!/bin/bash
# train.compile through the pipeline: on the MLP, the CNN (batch norm, dropout), the ResNet, a tiny
# GPT (dropout, attention) and a tiny BERT (padding mask), the losses of every step with compile
# equal those without: bit for bit where no kernel path changes; within f32 tolerance for BERT,
# whose captured step keeps its padding mask, and for ResNet-8 with Winograd convolutions. Most
# steps are replays (the `compile` record of metrics.jsonl; nearly all of BERT's when
# data.pad_to_multiple_of bounds its batch lengths), and so are the optimizer steps; the evaluation after training (its forwards
# compiled too) gives the same test loss and accuracy, and predict --compile the same predictions;
# dump_graph writes the passes' graphs; a bad compile key is one clear error.
# Usage: compile_flows.sh INGOT_BINARY REPO_ROOT
set -euo pipefail
ingot=$1
root=$(realpath "$2")
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
# CSV texts and a corpus (make_texts.py, as bert_flows.sh uses them).
python3 "$root/tests/pipeline/make_texts.py"

# parity NAME CONFIG TOLERANCE [--set ...]: the run with and without compile, step by step.
parity() {
  local name=$1 config=$2 tol=$3
  shift 3
  for c in false true; do
    local value=$c  # COMPILE_VALUE: the compiled side's train.compile (a section, e.g. with winograd)
    [ "$c" = true ] && value=${COMPILE_VALUE:-true}
    "$ingot" run "$config" --runs-dir "$work/$name/$c" --set "train.compile=$value" --set train.log_every=1 \
      --set train.eval_every_epoch=false "$@" > "$work/$name-$c.txt" 2>&1 ||
      { cat "$work/$name-$c.txt"; fail "$name: run with compile=$c"; }
  done
  local run_name
  run_name=$(python3 -c "import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))['name'])" "$config")
  python3 - "$work/$name/false/$run_name/metrics.jsonl" "$work/$name/true/$run_name/metrics.jsonl" "$tol" "$name" <<'PY' || fail "$name"
import json, sys
def records(p): return [json.loads(l) for l in open(p)]
a, b = records(sys.argv[1]), records(sys.argv[2])
tol, name = float(sys.argv[3]), sys.argv[4]
la = [r["loss"] for r in a if r.get("event") == "train_step"]
lb = [r["loss"] for r in b if r.get("event") == "train_step"]
assert len(la) == len(lb) and la, f"{len(la)} eager steps, {len(lb)} compiled"
worst = max(abs(x - y) / max(abs(x), 1e-6) for x, y in zip(la, lb))
assert worst <= tol, f"losses differ by {worst:.3g} (relative), allowed {tol}: {la[:5]} vs {lb[:5]}"
c = [r for r in b if r.get("event") == "compile"]
assert c, "no compile record in metrics.jsonl"
import os
least = int(os.environ.get("MIN_REPLAYED", "1"))
assert c[-1]["replayed"] >= least, f"{c[-1]['replayed']} steps replayed, expected at least {least}: {c[-1]}"
assert c[-1].get("optimizer_replayed", 0) >= 1, f"no optimizer step replayed: {c[-1]}"
assert not [r for r in a if r.get("event") == "compile"], "an eager run wrote a compile record"
sa = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "summary.json")))
sb = json.load(open(os.path.join(os.path.dirname(sys.argv[2]), "summary.json")))
for k in ("test_loss", "test_accuracy"):
    if k in sa:
        d = abs(sa[k] - sb[k]) / max(abs(sa[k]), 1e-6)
        assert d <= tol, f"{k}: {sa[k]} eager, {sb[k]} with compile (its evaluation forwards replayed)"
print(f"{name}: {len(la)} steps, worst relative difference {worst:.3g}, {c[-1]['replayed']} replayed, "
      f"{c[-1]['graphs']} graphs, fallback: {c[-1].get('fallback', 'none')}; optimizer steps "
      f"{c[-1]['optimizer_replayed']} replayed")
PY
}

parity mlp "$root/configs/fashion_mnist_mlp.yaml" 0 --set train.steps=60
parity cnn "$root/configs/fashion_mnist_cnn.yaml" 0 --set train.steps=40 --set data.batch_size=32 \
  --set train.scheduler.warmup.steps=5
parity resnet "$root/configs/fashion_mnist_resnet.yaml" 0 --set train.steps=30 --set data.batch_size=16
# Batch norm -> relu outputs recomputed for backward: less memory, the same bits.
COMPILE_VALUE='{recompute: true}' parity resnet_recompute "$root/configs/fashion_mnist_resnet.yaml" 0 \
  --set train.steps=12 --set data.batch_size=16
COMPILE_VALUE='{recompute: true}' parity cnn_recompute "$root/configs/fashion_mnist_cnn.yaml" 0 \
  --set train.steps=12 --set data.batch_size=32 --set train.scheduler.warmup.steps=5
# The pooled-gradient and in-place passes (on by default) switched off from the config.
COMPILE_VALUE='{pool_grads: false, in_place: false}' parity cnn_passes_off "$root/configs/fashion_mnist_cnn.yaml" 0 \
  --set train.steps=12 --set data.batch_size=32 --set train.scheduler.warmup.steps=5
# Winograd convolutions where measured faster: eager's losses to f32 rounding, not bit for bit
# (1e-5 to 1e-3 over these 12 steps, by which convolutions measured faster; training amplifies
# any rounding change, as eager's kernels of another ISA show: docs/compile.md; the gradients
# themselves are checked to 1e-4 in tests/graph/test_conv_algorithm.cpp).
COMPILE_VALUE='{winograd: true}' parity resnet_winograd "$root/configs/fashion_mnist_resnet.yaml" 1e-2 \
  --set train.steps=12 --set data.batch_size=64
parity gpt "$root/tests/pipeline/configs/tiny_gpt.yaml" 0
parity bert "$root/tests/pipeline/configs/tiny_bert.yaml" 1e-5 --set train.steps=40
# Batches cut to a multiple of 32 tokens: three shapes at most, so nearly every step replays.
MIN_REPLAYED=25 parity bert_padded "$root/tests/pipeline/configs/tiny_bert.yaml" 1e-5 --set train.steps=40 \
  --set data.pad_to_multiple_of=32

# dump_graph: every pass's graph, as text and dot, and the replay's per-node times.
"$ingot" run "$root/configs/fashion_mnist_mlp.yaml" --runs-dir "$work/dump" --set train.steps=8 \
  --set train.eval_every_epoch=false --dump-graph "$work/graphs" > "$work/dump.txt" 2>&1 ||
  { cat "$work/dump.txt"; fail "run with --dump-graph"; }
for f in graph0-0-captured graph0-1-dead_code graph0-2-fold_constants graph0-3-fuse graph0-4-plan_memory graph0-5-replay; do
  [ -s "$work/graphs/$f.txt" ] && [ -s "$work/graphs/$f.dot" ] || fail "dump_graph wrote no $f"
done
grep -q ' us$' "$work/graphs/graph0-5-replay.txt" || fail "the replay dump has no per-node times"
grep -q 'compile: graph 1 for' "$work/dump.txt" || fail "no line says what was compiled"
[ -s "$work/graphs/eval/graph0-5-replay.txt" ] || fail "no dump of the evaluation's graph"
# The same through the config key, given as a section.
"$ingot" run "$root/configs/fashion_mnist_mlp.yaml" --runs-dir "$work/dump2" --set train.steps=8 \
  --set train.eval_every_epoch=false --set train.compile.dump_graph="$work/graphs2" > "$work/dump2.txt" 2>&1 ||
  { cat "$work/dump2.txt"; fail "run with train.compile.dump_graph"; }
[ -s "$work/graphs2/graph0-4-plan_memory.txt" ] || fail "train.compile.dump_graph wrote nothing"

# predict --compile: the same predictions as without (two graphs: full batches and the last one).
python3 - <<'PY'
import random, struct
random.seed(3)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (70, 1, 28, 28), }"
header += " " * (118 - len(header)) + "\n"
with open("images.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % (70 * 784), *[random.random() for _ in range(70 * 784)]))
PY
for c in "" --compile; do
  "$ingot" predict "$work/mlp/true/fashion_mnist_mlp" images.npy --batch 32 -o "pred$c.csv" $c > "$work/pred.txt" 2>&1 ||
    { cat "$work/pred.txt"; fail "predict $c"; }
done
cmp -s pred.csv pred--compile.csv || fail "predict --compile gives other predictions"
[ "$(wc -l < pred--compile.csv)" -eq 71 ] || fail "predict --compile: $(wc -l < pred--compile.csv) lines"

# A bad compile key: one line naming the key, exit 2.
set +e
"$ingot" run "$root/configs/fashion_mnist_mlp.yaml" --runs-dir "$work/bad" --set train.compile=maybe > "$work/bad.txt" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$work/bad.txt"; fail "train.compile=maybe exited $rc, expected 2"; }
grep -q "train.compile: expected true or false, got 'maybe'" "$work/bad.txt" || { cat "$work/bad.txt"; fail "bad key message"; }
echo "compile flows: ok"
