#!/bin/bash
# The run command's own options: `ingot run --help`; KEY=VALUE overrides after the config (list
# elements by index) recorded in config.resolved.yaml (numbers in their shortest form); --print-config
# with the defaults of data, model and train; a bad positional argument; a
# model whose outputs are not the data's classes, refused with no run folder left;
# --resume that extends train.epochs (the schedule recomputed), and one that shrinks it, refused.
# Usage: cli_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cfg=tests/pipeline/configs/tiny_mlp.yaml

"$ingot" run --help > "$work/help.txt" || fail "run --help exit $?"
for opt in --resume --force --runs-dir --profile --memory-report --set --print-config KEY=VALUE; do
  grep -q -- "$opt" "$work/help.txt" || fail "run --help does not document $opt: $(cat "$work/help.txt")"
done
grep -q "^commands:" "$work/help.txt" && fail "run --help printed the global help"
echo "run --help: ok"

"$ingot" run $cfg model.sizes.1=24 train.epochs=1 --print-config > "$work/printed.yaml" || fail "--print-config"
grep -q "sizes: \[64, 24, 4\]" "$work/printed.yaml" || fail "printed: $(cat "$work/printed.yaml")"
grep -q "epochs: 1" "$work/printed.yaml" || fail "printed: $(cat "$work/printed.yaml")"
grep -q "prefetch: 2" "$work/printed.yaml" || fail "data defaults not filled: $(cat "$work/printed.yaml")"
for line in "  activation: relu" "  accumulate: 1" "  eval_every_epoch: true" "    type: cross_entropy" \
            "    betas: \[0.9, 0.999\]" "    weight_decay: 0.01"; do
  grep -q "^$line$" "$work/printed.yaml" || fail "model / train default '$line' not printed: $(cat "$work/printed.yaml")"
done
grep -qE "[0-9]{12}" "$work/printed.yaml" && fail "a long number: $(grep -E "[0-9]{12}" "$work/printed.yaml")"
echo "--print-config: ok"

set +e
"$ingot" run $cfg epochs > "$work/bad.txt" 2>&1
code=$?
"$ingot" run $cfg model.sizes.5=3 --runs-dir "$work" > "$work/bad_index.txt" 2>&1
code_index=$?
set -e
[ $code -eq 2 ] && grep -q "unexpected argument 'epochs' after the config: overrides are KEY=VALUE" "$work/bad.txt" \
  || fail "bad positional: exit $code: $(cat "$work/bad.txt")"
[ $code_index -eq 2 ] && grep -q "'model.sizes' is a list of 3 element(s)" "$work/bad_index.txt" \
  || fail "bad index: exit $code_index: $(cat "$work/bad_index.txt")"
echo "bad overrides: ok"

# A model with more outputs than the data's classes is refused before training and leaves no run
# folder behind (a corrected run needs no --force).
set +e
"$ingot" run $cfg model.sizes=[64,32,5] --runs-dir "$work/outputs" > "$work/outputs.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "set model.sizes\[-1\] (the last size) to 4" "$work/outputs.txt" \
  || fail "outputs != classes: exit $code: $(cat "$work/outputs.txt")"
grep -q "^epoch" "$work/outputs.txt" && fail "trained before refusing: $(cat "$work/outputs.txt")"
[ ! -e "$work/outputs/tiny_mlp" ] || fail "a refused run left $work/outputs/tiny_mlp"
echo "outputs != classes refused up front: ok"

"$ingot" run $cfg train.epochs=1 model.sizes.1=24 --runs-dir "$work" > "$work/one.txt" 2>&1 || fail "$(cat "$work/one.txt")"
grep -q "sizes: \[64, 24, 4\]" "$work/tiny_mlp/config.resolved.yaml" || fail "override not recorded"
# Shortest round-trip numbers (0.9, not yaml-cpp's 0.90000000000000002; 1/3 of warmup's start).
grep -q "betas: \[0.9, 0.999\]" "$work/tiny_mlp/config.resolved.yaml" || fail "betas: $(grep betas "$work/tiny_mlp/config.resolved.yaml")"
grep -q "start_factor: 0.3333333333333333$" "$work/tiny_mlp/config.resolved.yaml" || fail "start_factor not shortest"
# A run whose file still has the 17-digit form (written before) resumes: the values are the same.
sed -i 's/betas: \[0.9, 0.999\]/betas: [0.90000000000000002, 0.999]/' "$work/tiny_mlp/config.resolved.yaml"
"$ingot" run $cfg train.epochs=3 model.sizes.1=24 --runs-dir "$work" --resume > "$work/three.txt" 2>&1 \
  || fail "extending resume: $(cat "$work/three.txt")"
grep -q "note: resuming with train.epochs 1 -> 3" "$work/three.txt" || fail "$(cat "$work/three.txt")"
grep -q '"epochs":3' "$work/tiny_mlp/summary.json" || fail "summary: $(cat "$work/tiny_mlp/summary.json")"
[ "$(grep -c '"event":"epoch"' "$work/tiny_mlp/metrics.jsonl")" -eq 3 ] || fail "not 3 epochs in the metrics"
set +e
"$ingot" run $cfg train.epochs=2 model.sizes.1=24 --runs-dir "$work" --resume > "$work/two.txt" 2>&1
code=$?
"$ingot" run $cfg train.epochs=4 model.sizes.1=32 --runs-dir "$work" --resume > "$work/changed.txt" 2>&1
code_changed=$?
set -e
[ $code -eq 2 ] && grep -q "train.epochs was 3 and is now 2: a resume may only extend training" "$work/two.txt" \
  || fail "shrinking resume: exit $code: $(cat "$work/two.txt")"
[ $code_changed -eq 2 ] && grep -q "the config changed since the run started" "$work/changed.txt" \
  || fail "a changed model with longer training accepted: exit $code_changed: $(cat "$work/changed.txt")"
echo "--resume extending train.epochs: ok"
