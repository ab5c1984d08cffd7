#!/bin/bash
# The compression pipeline end to end (tests/compress/configs/compress_pipeline.yaml, the shipped
# configs/fashion_mnist_compress.yaml in small): train -> distill -> prune -> quantize -> evaluate
# -> save. The stage table must have one row per stage that changed the model, each smaller than
# the one before, the saved model must be the pruned student with int8 weights, and the shipped
# config must pass validation with the compression plugins loaded.
# Usage: compress_pipeline.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ingot" run tests/compress/configs/compress_pipeline.yaml --runs-dir "$work/runs" > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "run failed"; }
run="$work/runs/compress_pipeline"
md="$run/compression.md"
[ -f "$md" ] || fail "no compression.md"
for row in "| 0 | train |" "| 1 | distill |" "| 2 | prune |" "| 3 | quantize |"; do
  grep -qF "$row" "$md" || fail "no row '$row' in: $(cat "$md")"
done
# bytes on disk shrink from row to row (the student, then half its filters, then int8)
python3 - "$run/metrics.jsonl" <<'PY' || fail "the stage rows do not shrink: $(cat "$md")"
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "stage_report"]
assert [r["stage"] for r in rows] == ["train", "distill", "prune", "quantize"], rows
sizes = [r["bytes_on_disk"] for r in rows]
assert all(a > b for a, b in zip(sizes, sizes[1:])), sizes
assert sizes[2] > 2.5 * sizes[3], sizes  # int8 weights (scales and the header aside: 4x)
assert all(r["accuracy"] >= 0.5 for r in rows), [r["accuracy"] for r in rows]
PY
python3 - "$run/model.safetensors" <<'PY' || fail "the saved model is not the pruned int8 student"
import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n))
assert h["0.weight"]["dtype"] == "I8" and h["0.weight"]["shape"] == [4, 1, 3, 3], h["0.weight"]
assert "1.running_mean" not in h, "BatchNorm not folded"
PY
grep -q "distill: student" "$work/out.txt" || fail "no distill line"
grep -q "quantize: int8 static" "$work/out.txt" || fail "no quantize line"

# The shipped config, shrunk to a few steps on synthetic 28x28 images: every key it uses is valid and
# every stage runs with its shapes.
sed -e "s|^name: .*|name: shipped_compress|" \
    -e "s|^report: {stages: true}|report: {stages: true, latency_iters: 2, throughput_batch: 8, throughput_iters: 1}|" \
    -e "s|^  dataset: fashion_mnist.*|  dataset: synthetic\n  synthetic: {size: 256, test_size: 64, channels: 1, height: 28, width: 28, classes: 10}|" \
    -e "s|^  epochs: 4|  steps: 2|; s|fine_tune: {epochs: 4}|fine_tune: {steps: 2}|; s|^      epochs: 2|      steps: 2|" \
    -e "s|calibration: {batches: 32,|calibration: {batches: 2,|; s|warmup: {steps: 100,|warmup: {steps: 1,|" \
    configs/fashion_mnist_compress.yaml > "$work/shipped.yaml"
grep -q "dataset: synthetic" "$work/shipped.yaml" && ! grep -q "epochs" "$work/shipped.yaml" ||
  fail "the shipped config changed: update the sed lines above"
"$ingot" run "$work/shipped.yaml" --runs-dir "$work/runs" > "$work/shipped.txt" 2>&1 ||
  { cat "$work/shipped.txt"; fail "the shipped compression config does not run"; }
grep -qF "| 3 | quantize |" "$work/runs/shipped_compress/compression.md" || fail "the shipped config's table lacks a row"
echo "compress pipeline: ok"
