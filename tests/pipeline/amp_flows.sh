#!/bin/bash
# Mixed precision end to end (train.amp): bf16 autocast trains on the CPU through the kernel
# plugin and says so in the header and the summary; fp16 on a CPU without f16 kernels is refused
# before the run folder is made; fp16 with loss scaling on the reference backend logs the scale
# and keeps the scaler's state in its checkpoints.
# Usage: amp_flows.sh INGOT_BINARY FLOW   (FLOW: bf16 | fp16_refused | fp16_scaled)
set -euo pipefail
ingot=$1
flow=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cfg=tests/pipeline/configs/tiny_mlp.yaml
run=$work/tiny_mlp
case "$flow" in
bf16)
  set +e
  "$ingot" run $cfg --set train.amp.dtype=bf16 --runs-dir "$work" > "$work/out.txt" 2>&1
  code=$?
  set -e
  if [ $code -eq 2 ] && grep -q "slower than f32" "$work/out.txt"; then
    echo "INGOT_SKIP: this CPU has no bf16 kernels: $(grep 'error' "$work/out.txt")"
    exit 0
  fi
  [ $code -eq 0 ] || { cat "$work/out.txt"; fail "exit $code"; }
  grep -q "^amp: bf16 autocast (matmul and conv in bf16, f32 weights and optimizer state), loss scaling off" \
    "$work/out.txt" || fail "no amp header line: $(head -8 "$work/out.txt")"
  grep -q '"amp":"bf16"' "$run/summary.json" || fail "summary: $(cat "$run/summary.json")"
  grep -Eq '"cpu_onednn":[1-9]' "$run/summary.json" || fail "no op ran on cpu_onednn: $(cat "$run/summary.json")"
  grep -Eq "evaluate: 128 samples  accuracy (9[0-9]|100)\." "$work/out.txt" || fail "accuracy: $(grep evaluate "$work/out.txt")"
  grep -q "loss_scale" "$run/metrics.jsonl" && fail "bf16 needs no loss scaling, but a scale was logged"
  echo "bf16: ok"
  ;;
fp16_refused)
  set +e
  "$ingot" run $cfg --set train.amp.dtype=fp16 --runs-dir "$work" > "$work/out.txt" 2>&1
  code=$?
  set -e
  [ $code -eq 2 ] || { cat "$work/out.txt"; fail "exit $code, expected 2"; }
  line=$(grep "^ingot: error:" "$work/out.txt") || fail "no error line"
  echo "$line" | grep -Eq "train.amp.dtype fp16 on cpu: no backend here runs [a-z0-9]+ in fp16 except the slow reference backend" ||
    fail "message: $line"
  echo "$line" | grep -q "use dtype: bf16 on a CPU" || fail "no advice: $line"
  [ ! -e "$run" ] || fail "the run folder was made for a refused run"
  echo "fp16 refused: ok"
  ;;
fp16_scaled)
  # The reference backend alone runs anything, so fp16 is allowed there (slowly): the scaler's
  # bookkeeping end to end.
  "$ingot" run $cfg --set backend=reference --set train.amp.dtype=fp16 --set train.checkpoint.every_steps=10 \
    --runs-dir "$work" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "run failed"; }
  grep -q "^amp: fp16 autocast .*loss scaling from 65536" "$work/out.txt" || fail "header: $(head -8 "$work/out.txt")"
  grep -Eq "^epoch 3/3 done .*  lr [0-9.e+-]+  scale [0-9]+" "$work/out.txt" || fail "no scale on the progress line"
  grep -m1 '"event":"train_step"' "$run/metrics.jsonl" | grep -Eq '"loss_scale":[0-9]' || fail "no loss_scale in metrics"
  grep -Eq '"amp":"fp16".*"loss_scale":[0-9.e+]+,"amp_skipped_steps":[0-9]+' "$run/summary.json" ||
    fail "summary: $(cat "$run/summary.json")"
  for ck in "$run"/checkpoints/step-*.safetensors "$run/checkpoints/epoch-003.safetensors"; do
    grep -aq '"scaler/scale"' "$ck" && grep -aq '"scaler/growth_tracker"' "$ck" || fail "no scaler state in $ck"
  done
  grep -Eq "evaluate: 128 samples  accuracy (9[0-9]|100)\." "$work/out.txt" || fail "accuracy: $(grep evaluate "$work/out.txt")"
  echo "fp16 with loss scaling: ok"
  ;;
*) fail "unknown flow $flow" ;;
esac
