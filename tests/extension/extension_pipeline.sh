#!/bin/bash
# `ingot run` with the example extension: its loss trains, its callback writes one line per
# optimizer step, its stage prints, and without INGOT_EXTENSION_PATH the config is refused.
# Usage: extension_pipeline.sh INGOT_BINARY EXTENSION_DIR
set -euo pipefail
ingot=$1
ext_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sed "s|LR_TRACE_PATH|$work/lr.txt|" tests/extension/configs/template_pipeline.yaml > "$work/config.yaml"

INGOT_EXTENSION_PATH=$ext_dir "$ingot" run "$work/config.yaml" --runs-dir "$work/runs" > "$work/out.txt" 2>&1 ||
  { cat "$work/out.txt"; fail "run failed"; }
grep -q "loss huber" "$work/out.txt" || fail "the huber loss was not used: $(cat "$work/out.txt")"
grep -q "param_report: total 340 parameters" "$work/out.txt" || fail "no param_report output"
grep -Eq "evaluate: 64 samples  accuracy (9[0-9]|100)\." "$work/out.txt" || fail "did not learn: $(grep evaluate "$work/out.txt")"
[ "$(wc -l < "$work/lr.txt")" -eq 32 ] || fail "lr_trace: expected 32 lines, got $(wc -l < "$work/lr.txt")"
grep -q "type: huber" "$work/runs/template_pipeline/config.resolved.yaml" || fail "resolved config lacks the loss"

set +e
"$ingot" run "$work/config.yaml" --runs-dir "$work/runs2" > "$work/out2.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "without the extension: exit $code, expected 2"
grep -q "unknown stage type 'param_report'" "$work/out2.txt" || fail "$(cat "$work/out2.txt")"
echo "extension pipeline: ok"
