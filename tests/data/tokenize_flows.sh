#!/bin/bash
# End to end: `ingot tokenize` writes llm.c shards (byte and SentencePiece tokens) that a tiny GPT
# trains on through the tokens dataset; a text run with a SentencePiece tokenizer keeps its model
# in the run folder, records it, reuses it on --resume (no second training) and generate reads it.
# Usage: tokenize_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# About 30 KB of sentences from a small vocabulary (the same every time).
awk 'BEGIN { split("the cat sat on mat dog ran far away and a big red ball light house over river stone tree", w, " ");
             s = 7; for (l = 0; l < 1200; l++) { line = ""; n = 3 + l % 6;
               for (k = 0; k < n; k++) { s = (s * 1103515245 + 12345) % 2147483648; line = line (k ? " " : "") w[1 + int(s / 65536) % 20] }
               print line "." } }' > "$work/corpus.txt"

# Byte tokens: uint16 shards, the train part split in equal shards, the data: line to use.
"$ingot" tokenize "$work/corpus.txt" -o "$work/bytes" --shard-tokens 10000 > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "tokenize failed"; }
grep -q "wrote $work/bytes/train_000002.bin: .* tokens (uint16)" "$work/out.txt" || fail "no third train shard: $(cat "$work/out.txt")"
grep -q "wrote $work/bytes/test_000000.bin" "$work/out.txt" || fail "no test shard"
grep -q "data: {dataset: tokens, tokens: {train: \"$work/bytes/train_\*.bin\".*vocab_size: 256}}" "$work/out.txt" ||
  fail "no data: line: $(tail -1 "$work/out.txt")"
magic=$(od -An -t d4 -N 12 "$work/bytes/train_000000.bin" | tr -s ' ')
[[ "$magic" == " 20240520 1 "* ]] || fail "header: '$magic'"
# The folder holds shards: refused without --force, replaced with it (stale ones removed).
set +e; "$ingot" tokenize "$work/corpus.txt" -o "$work/bytes" > /dev/null 2> "$work/err.txt"; code=$?; set -e
[ $code -eq 2 ] && grep -q "already holds shards.*--force" "$work/err.txt" || fail "no refusal: exit $code, $(cat "$work/err.txt")"
"$ingot" tokenize "$work/corpus.txt" -o "$work/bytes" --force > "$work/out.txt" 2>&1 || fail "--force failed"
grep -q "removed $work/bytes/train_000002.bin" "$work/out.txt" || fail "stale shard kept: $(cat "$work/out.txt")"
[ ! -e "$work/bytes/train_000001.bin" ] || fail "stale shard left"
set +e; "$ingot" tokenize "$work/corpus.txt" -o "$work/x" --sentencepiece-vocab 5000 > /dev/null 2> "$work/err.txt"; code=$?; set -e
[ $code -eq 2 ] && grep -q "ingot: error: --sentencepiece-vocab: 5000 is more pieces than this corpus gives" "$work/err.txt" ||
  fail "vocab too large: exit $code, $(cat "$work/err.txt")"

# SentencePiece tokens: tokenizer.model beside the shards.
"$ingot" tokenize "$work/corpus.txt" -o "$work/sp" --sentencepiece-vocab 64 > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "tokenize --sentencepiece-vocab failed"; }
[ -s "$work/sp/tokenizer.model" ] || fail "no tokenizer.model"
grep -q "vocab_size: 64}}" "$work/out.txt" || fail "vocabulary: $(tail -1 "$work/out.txt")"

gpt() {  # a one-layer GPT on data section $2, named $1
  cat > "$work/$1.yaml" <<EOF
name: $1
seed: 0
threads: 1
data: $2
model: {preset: gpt, n_layer: 1, n_head: 2, n_embd: 16, block_size: 16, dropout: 0.0}
train:
  steps: 3
  loss: {type: cross_entropy, class_dim: -1}
  optimizer: {type: adamw, lr: 0.01}
  log_every: 1
stages: [train, save]
EOF
}
gpt shards "{dataset: tokens, batch_size: 4, workers: 0, tokens: {train: '$work/sp/train_*.bin', test: '$work/sp/test_*.bin', block_size: 16, vocab_size: 64}}"
"$ingot" run "$work/shards.yaml" --runs-dir "$work/runs" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "run on shards failed"; }
grep -q "done in" "$work/out.txt" || fail "shards run: $(cat "$work/out.txt")"

# A text run with a SentencePiece tokenizer: the model file in the run folder, named by the config.
gpt spm "{dataset: text, batch_size: 4, workers: 0, text: {path: '$work/corpus.txt', block_size: 16, tokenizer: {type: sentencepiece, vocab_size: 64}}}"
"$ingot" --log info run "$work/spm.yaml" --runs-dir "$work/runs" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "spm run failed"; }
grep -q "training a bpe tokenizer of 64 pieces" "$work/out.txt" || fail "no training line: $(cat "$work/out.txt")"
model=$(grep -oE 'model: tokenizer-[0-9a-f]{16}\.model' "$work/runs/spm/config.resolved.yaml" | cut -c8-)
[ -n "$model" ] && [ -s "$work/runs/spm/$model" ] || fail "model file: '$model', $(ls "$work/runs/spm")"
grep -q "vocab_size: 64" "$work/runs/spm/config.resolved.yaml" || fail "resolved model vocabulary"
# --resume reads the run's file (no training), and a longer run goes on from the checkpoint.
"$ingot" --log info run "$work/spm.yaml" --runs-dir "$work/runs" --resume --set train.steps=5 > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "resume failed"; }
! grep -q "training a bpe tokenizer" "$work/out.txt" || fail "the resume trained the tokenizer again"
grep -q "resuming from" "$work/out.txt" || fail "did not resume: $(cat "$work/out.txt")"
"$ingot" generate "$work/runs/spm" --prompt "the cat" --max-tokens 8 --seed 1 > "$work/gen.txt" 2> "$work/err.txt" ||
  { cat "$work/err.txt"; fail "generate failed"; }
grep -q "^the cat" "$work/gen.txt" || fail "generate: $(cat "$work/gen.txt")"
grep -q "8 new tokens" "$work/err.txt" || fail "generate: $(cat "$work/err.txt")"
# Another corpus makes another model file: the resume is refused, naming the changed line.
echo "the red dog ran over the stone." >> "$work/corpus.txt"
set +e; "$ingot" run "$work/spm.yaml" --runs-dir "$work/runs" --resume --set train.steps=6 > /dev/null 2> "$work/err.txt"; code=$?; set -e
[ $code -eq 2 ] && grep -q "changed.*tokenizer-" "$work/err.txt" || fail "changed corpus: exit $code, $(cat "$work/err.txt")"
[ "$(ls "$work/runs/spm" | grep -c '^tokenizer-')" -eq 1 ] || fail "a refused resume wrote a tokenizer"
echo "tokenize flows: ok"
