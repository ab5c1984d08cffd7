#!/bin/bash
# scripts/run's last line (scripts/setup's ingot_path_hint): run as printed, it puts the build's
# `ingot` on PATH, so the README's commands work as written; once PATH has it, nothing is printed.
# Usage: path_hint_flows.sh INGOT_BINARY (the build's: BUILD/apps/ingot/ingot)
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
ingot=$(realpath "$1")
source scripts/setup
INGOT_BUILD=$(dirname "$(dirname "$(dirname "$ingot")")")
PATH=/usr/bin:/bin
hint=$(ingot_path_hint)
line=$(echo "$hint" | tail -1)
[[ "$line" == "  export PATH="* ]] || fail "no export line: $hint"
eval "$line"
[ "$(command -v ingot)" = "$ingot" ] || fail "after '$line', ingot is '$(command -v ingot || true)'"
ingot --version > /dev/null || fail "ingot --version"
[ -z "$(ingot_path_hint)" ] || fail "printed again with ingot on PATH: $(ingot_path_hint)"
echo "path hint: ok"
