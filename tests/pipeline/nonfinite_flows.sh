#!/bin/bash
# The non-finite guard end to end: a learning rate of 1e30 makes the loss NaN. With the default
# on_nonfinite: stop the run ends with exit 1 naming the step and the quantity, saves no weights
# and no checkpoint from that state and records "status": "failed"; with skip_step it stops once
# train.max_skipped steps in a row were skipped (and does not advise the skip_step that is set); with
# train.detect_anomaly the message also names the first op whose output went non-finite.
# Usage: nonfinite_flows.sh INGOT_BINARY FLOW   (FLOW: stop | skip_exhausted | anomaly)
set -euo pipefail
ingot=$1
flow=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sets=(--set train.optimizer.lr=1.0e30)
[ "$flow" = skip_exhausted ] && sets+=(--set train.on_nonfinite=skip_step --set train.max_skipped=3)
[ "$flow" = anomaly ] && sets+=(--set train.detect_anomaly=true)
set +e
"$ingot" run tests/pipeline/configs/tiny_mlp.yaml "${sets[@]}" --runs-dir "$work" > "$work/out.txt" 2>&1
code=$?
set -e
[ $code -eq 1 ] || fail "exit $code, expected 1: $(tail -3 "$work/out.txt")"
line=$(grep "^ingot: error:" "$work/out.txt") || fail "no error line: $(tail -3 "$work/out.txt")"
echo "$line" | grep -Eq "step [0-9]+: the loss \(NaN\) is not finite" || fail "message: $line"
echo "$line" | grep -q "nothing was saved from it" || fail "message: $line"
if [ "$flow" = skip_exhausted ]; then
  echo "$line" | grep -q "3 steps in a row skipped (train.max_skipped: 3)" || fail "message: $line"
  [ "$(grep -c "optimizer step skipped" "$work/out.txt")" -ge 2 ] || fail "no skipped steps reported"
  # skip_step is set already: the advice is another lever, not that one.
  echo "$line" | grep -q "set train.on_nonfinite" && fail "advises the skip_step that is set: $line"
  echo "$line" | grep -q "lower the learning rate (or clip the gradients: train.clip_grad_norm)" || fail "message: $line"
else
  echo "$line" | grep -q "lower the learning rate (or set train.on_nonfinite: skip_step)" || fail "message: $line"
fi
if [ "$flow" = anomaly ]; then
  echo "$line" | grep -Eq "\(anomaly detection: op [A-Za-z_0-9]+ \((forward|backward), in " || fail "message: $line"
else
  echo "$line" | grep -vq "anomaly" || fail "anomaly detection is off but named: $line"
fi
run=$work/tiny_mlp
grep -q '"status":"failed"' "$run/summary.json" || fail "summary: $(cat "$run/summary.json")"
[ ! -e "$run/model.safetensors" ] || fail "weights were saved from a non-finite state"
[ -z "$(ls "$run/checkpoints")" ] || fail "a checkpoint was saved: $(ls "$run/checkpoints")"
echo "non-finite $flow: ok"
