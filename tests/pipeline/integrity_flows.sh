#!/bin/bash
# Checkpoint integrity: one flipped byte in a checkpoint's tensor data is caught by its CRC-32
# (fault_flows.sh: its metadata, and checkpoints that verify but do not fit).
# --resume then falls back to the newest checkpoint that verifies, says so and finishes; with no
# good checkpoint left it refuses with exit 2 naming the damage.
# Usage: integrity_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cfg=tests/pipeline/configs/tiny_mlp.yaml
run=$work/tiny_mlp
flip() {  # flips one bit of the file's last byte (tensor data: the header comes first)
  python3 - "$1" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-5] ^= 0x10
open(p, "wb").write(bytes(b))
PY
}
"$ingot" run $cfg --runs-dir "$work" > "$work/a.txt" 2>&1 || { cat "$work/a.txt"; fail "first run"; }
grep -q "^epoch-003$" "$run/checkpoints/latest" || fail "latest: $(cat "$run/checkpoints/latest")"
flip "$run/checkpoints/epoch-003.safetensors"
touch -d '1 minute ago' "$run/checkpoints/epoch-001.safetensors" "$run/checkpoints/epoch-002.safetensors"
touch -d '2 minutes ago' "$run/checkpoints/epoch-001.safetensors"
"$ingot" run $cfg --resume --runs-dir "$work" > "$work/b.txt" 2>&1 || { cat "$work/b.txt"; fail "resume after damage"; }
grep -q "epoch-003.safetensors: the file is damaged: its content has CRC-32" "$work/b.txt" || fail "$(cat "$work/b.txt")"
grep -q "resuming from .*epoch-002.safetensors, the newest checkpoint that verifies" "$work/b.txt" || fail "$(cat "$work/b.txt")"
grep -q '"status":"completed"' "$run/summary.json" || fail "summary: $(cat "$run/summary.json")"

# Every checkpoint damaged: refused, exit 2, each reason named.
for f in "$run"/checkpoints/*.safetensors; do flip "$f"; done
set +e
"$ingot" run $cfg --resume --runs-dir "$work" > "$work/c.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] || fail "exit $code, expected 2: $(cat "$work/c.txt")"
grep -q "no checkpoint loads (.*damaged.*): start over with --force" "$work/c.txt" || fail "$(cat "$work/c.txt")"
echo "integrity: ok"
