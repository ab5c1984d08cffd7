#!/bin/bash
# A language model through the pipeline's features: a resume mid-epoch gives the losses of the
# straight run bit for bit (dropout in the embeddings and attention included), bf16 autocast with
# per-block checkpointing trains, a teacher distilled into a smaller GPT then quantized to int8
# still generates, data parallel over 2 ranks trains, and the export formats are written.
# Usage: gpt_flows.sh INGOT_BINARY CONFIG
set -euo pipefail
ingot=$1
config=$(realpath "$2")
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
for i in $(seq 1 400); do echo "line $i: in the beginning was the word, and the word was with the tiny model."; done > corpus.txt
run() { "$ingot" run "$config" --runs-dir "$work/runs" "$@" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "run $*"; }; }
losses() { python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get('event') == 'train_step': print(r['step'], repr(r['loss']))" "$1"; }

run name=straight
grep -q "tok/s" "$work/out.txt" || fail "progress lines count tokens: $(cat "$work/out.txt")"
grep -q "next-token accuracy .* perplexity" "$work/out.txt" || fail "no perplexity: $(cat "$work/out.txt")"
run name=resumed train.steps=10
run name=resumed --resume
[ "$(losses runs/straight/metrics.jsonl)" == "$(losses runs/resumed/metrics.jsonl)" ] ||
  fail "resume changed the losses: $(losses runs/straight/metrics.jsonl | tail -2) vs $(losses runs/resumed/metrics.jsonl | tail -2)"

run name=amp train.amp.dtype=bf16 train.checkpointing.blocks=true backend=reference
grep -q "checkpointing: 2 segments (one per block)" "$work/out.txt" || fail "no per-block checkpointing: $(cat "$work/out.txt")"

cat > stages.yaml <<'YAML'
- train
- {type: distill, teacher: current, student: {preset: gpt, n_layer: 1, n_head: 2, n_embd: 16, block_size: 16},
   temperature: 2, alpha: 0.5, fine_tune: {steps: 10}}
- {type: quantize, mode: dynamic}
- evaluate
- save
YAML
sed "s|^stages:.*|stages:|" "$config" > compress.yaml
sed 's/^/  /' stages.yaml >> compress.yaml
"$ingot" run compress.yaml --runs-dir "$work/runs" name=compressed data.text.path="$work/corpus.txt" > out.txt 2>&1 ||
  { cat out.txt; fail "distill + quantize"; }
grep -q "distill: student" out.txt && grep -q "4 of 4 layers int8" out.txt || fail "distill / quantize: $(cat out.txt)"
"$ingot" generate runs/compressed --prompt "in the" --max-tokens 20 --seed 2 > gen.txt 2> gen.err || fail "generate: $(cat gen.err)"
grep -q "^in the" gen.txt && grep -q "20 new tokens .* KV cache" gen.err || fail "generate: $(cat gen.txt gen.err)"

"$ingot" launch --nproc-per-node 2 run "$config" --runs-dir "$work/runs" name=ddp parallel.mode=ddp > out.txt 2>&1 || { cat out.txt; fail "ddp"; }
grep -q "evaluate: .* perplexity" out.txt || fail "ddp: $(cat out.txt)"

"$ingot" export runs/straight -o straight.onnx > out.txt 2>&1 || { cat out.txt; fail "onnx export"; }
grep -q "input_ids \[N, T\] int64" out.txt || fail "onnx: $(cat out.txt)"
"$ingot" export runs/straight --format hf -o hf > out.txt 2>&1 || { cat out.txt; fail "hf export"; }
[ -s hf/model.safetensors ] && grep -q '"model_type": "gpt2"' hf/config.json || fail "hf folder"
echo "ok"
