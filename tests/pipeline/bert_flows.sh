#!/bin/bash
# A BERT through the pipeline: a classifier trained on CSV texts (quoted commas included) learns
# them, a resume mid-run gives the straight run's losses bit for bit (dropout on), bf16 autocast
# with per-layer checkpointing trains, dynamic int8 quantization still classifies, data parallel
# over 2 ranks trains, predict reads a CSV of texts, the ONNX export takes token ids, the Hugging
# Face export names the classes; and BERT's
# recipe: masked-language-model pretraining, then fine-tuning its encoder into the classifier.
# Usage: bert_flows.sh INGOT_BINARY CONFIG
set -euo pipefail
ingot=$1
config=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
# Texts whose class is in their words, quoted as CSV wants it, and a corpus (make_texts.py).
python3 "$here/make_texts.py"
run() { "$ingot" run "$config" --runs-dir "$work/runs" "$@" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "run $*"; }; }
losses() { python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get('event') == 'train_step': print(r['step'], repr(r['loss']))" "$1"; }
accuracy() { python3 -c "
import json, sys
print(json.load(open(sys.argv[1]))['test_accuracy'])" "$1"; }

run name=straight
grep -q "tok/s" "$work/out.txt" || fail "progress lines count tokens: $(cat "$work/out.txt")"
grep -q "data: 160 train / 40 test" "$work/out.txt" || fail "data line: $(cat "$work/out.txt")"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.9 else 1)" "$(accuracy runs/straight/summary.json)" ||
  fail "the classifier did not learn the texts: accuracy $(accuracy runs/straight/summary.json)"
grep -q "pad_id: 256" runs/straight/config.resolved.yaml && grep -q "vocab_size: 260" runs/straight/config.resolved.yaml ||
  fail "the data's vocabulary and [PAD] are not recorded: $(cat runs/straight/config.resolved.yaml)"

run name=resumed train.steps=60
run name=resumed --resume
[ "$(losses runs/straight/metrics.jsonl)" == "$(losses runs/resumed/metrics.jsonl)" ] ||
  fail "resume changed the losses: $(losses runs/straight/metrics.jsonl | tail -2) vs $(losses runs/resumed/metrics.jsonl | tail -2)"

run name=amp train.amp.dtype=bf16 train.checkpointing.blocks=true backend=reference train.steps=20
grep -q "checkpointing: 2 segments (one per block)" "$work/out.txt" || fail "no per-layer checkpointing: $(cat "$work/out.txt")"

"$ingot" predict runs/straight texts.csv -o predictions.csv > out.txt 2>&1 || { cat out.txt; fail "predict"; }
[ "$(cut -d, -f4 predictions.csv | tail -n +2 | tr '\n' ' ')" == "pos neg " ] || fail "predict: $(cat predictions.csv)"
"$ingot" export runs/straight -o bert.onnx > out.txt 2>&1 || { cat out.txt; fail "onnx export"; }
grep -q "input_ids \[N, T\] int64 (T <= 96), output \[N, 2\] logits, 2 classes (neg, pos)" out.txt || fail "onnx: $(cat out.txt)"
"$ingot" export runs/straight --format hf -o hf > out.txt 2>&1 || { cat out.txt; fail "hf export"; }
[ -s hf/model.safetensors ] && grep -q '"BertForSequenceClassification"' hf/config.json && grep -q '"1": "pos"' hf/config.json ||
  fail "hf folder: $(cat out.txt hf/config.json)"

sed "s|^stages:.*|stages: [train, {type: quantize, mode: dynamic}, evaluate, save]|" "$config" > quant.yaml
"$ingot" run quant.yaml --runs-dir "$work/runs" name=quantized > out.txt 2>&1 || { cat out.txt; fail "quantize"; }
grep -q "of 14 layers int8" out.txt || fail "quantize: $(cat out.txt)"
"$ingot" predict runs/quantized texts.csv > out.txt 2>&1 || { cat out.txt; fail "predict int8"; }

"$ingot" launch --nproc-per-node 2 run "$config" --runs-dir "$work/runs" name=ddp parallel.mode=ddp train.steps=20 \
  > out.txt 2>&1 || { cat out.txt; fail "ddp"; }
grep -q "evaluate: " out.txt || fail "ddp: $(cat out.txt)"

# pretraining (masked LM on the corpus, SentencePiece tokens), then fine-tuning its encoder on the
# same tokenizer (file:), which the fine-tuned run keeps for predict
cat > mlm.yaml <<'YAML'
name: mlm
seed: 0
data:
  dataset: text
  text: {path: corpus.txt, block_size: 96, objective: mlm, tokenizer: {type: sentencepiece, vocab_size: 80}}
  batch_size: 8
model: {preset: bert, head: mlm, n_layer: 2, n_head: 2, n_embd: 32, block_size: 96, dropout: 0.1}
train:
  steps: 30
  loss: {type: cross_entropy, class_dim: -1}
  optimizer: {type: adamw, lr: 0.002}
stages: [train, evaluate, save]
YAML
"$ingot" run mlm.yaml --runs-dir "$work/runs" > out.txt 2>&1 || { cat out.txt; fail "mlm pretraining"; }
grep -q "masked-token accuracy .* perplexity" out.txt || fail "mlm: no masked-token accuracy and perplexity: $(cat out.txt)"
model=$(ls runs/mlm/tokenizer-*.model)
run name=finetuned 'init_from={path: runs/mlm/model.safetensors, strict: false}' train.steps=20 \
  "data.text_classification.tokenizer={type: sentencepiece, file: $model}"
grep -q "init_from .*loaded" "$work/out.txt" && grep -q "missing.*classifier.weight" "$work/out.txt" ||
  fail "fine-tuning did not start from the pretrained encoder: $(cat "$work/out.txt")"
cmp -s "$model" runs/finetuned/tokenizer-*.model || fail "the fine-tuned run keeps no copy of its tokenizer"
"$ingot" predict runs/finetuned texts.csv > out.txt 2>&1 || { cat out.txt; fail "predict with the pretraining run's tokenizer"; }
echo "ok"
