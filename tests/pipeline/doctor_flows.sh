#!/bin/bash
# `ingot doctor`: the CPU, threads, every plugin and dataset; a plugin disabled on purpose is not a
# problem, nor a GPU plugin without a GPU (information); a file that is not a plugin is one, with
# its reason; a bad argument is a usage error.
# Usage: doctor_flows.sh INGOT_BINARY NOT_A_PLUGIN_FOLDER
set -euo pipefail
ingot=$1
bogus=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ingot" doctor > "$work/out.txt" 2>&1 || fail "doctor exit $?: $(cat "$work/out.txt")"
for want in "^cpu: " "^  extensions: " "^threads: [0-9]* usable core" "^plugins:" "^  cpu_onednn " "^backends and devices:" \
  "^  reference " "^datasets:" "^  synthetic "; do
  grep -q "$want" "$work/out.txt" || fail "no '$want': $(cat "$work/out.txt")"
done
grep -qE "^(no problems found|[0-9]+ thing\(s\) to look at:)" "$work/out.txt" || fail "no verdict: $(cat "$work/out.txt")"
# Without an NVIDIA GPU on the PCI bus, GPU plugins that cannot run are information, not problems.
nvidia=0
for d in /sys/bus/pci/devices/*; do
  [ "$(cat "$d/vendor" 2> /dev/null)" = 0x10de ] && [[ "$(cat "$d/class" 2> /dev/null)" == 0x03* ]] && nvidia=1
done
if [ $nvidia -eq 0 ] && ! grep -qE "^  cuda +usable" "$work/out.txt"; then
  grep -q "^info: no NVIDIA GPU on this machine's PCI bus: cuda.* nothing to run on, which is normal here" \
    "$work/out.txt" || fail "no info line for the GPU plugins: $(cat "$work/out.txt")"
  grep -qE "^  - plugin (cuda|nccl_ddp)" "$work/out.txt" && fail "a GPU plugin counted as a problem: $(cat "$work/out.txt")"
fi

INGOT_DISABLE_PLUGINS=cpu_onednn "$ingot" doctor > "$work/off.txt" 2>&1 || fail "doctor with a plugin disabled"
grep -q "cpu_onednn .*disabled by INGOT_DISABLE_PLUGINS" "$work/off.txt" || fail "$(cat "$work/off.txt")"
grep -q "^  - plugin cpu_onednn" "$work/off.txt" && fail "a disabled plugin counted as a problem: $(cat "$work/off.txt")"

INGOT_PLUGIN_PATH="$bogus" "$ingot" doctor > "$work/bogus.txt" 2>&1 || fail "doctor with a bad plugin file"
grep -q "^  - plugin fixture_not_a_plugin: " "$work/bogus.txt" || fail "the bad plugin is not a problem: $(cat "$work/bogus.txt")"

set +e
"$ingot" doctor extra > "$work/bad.txt" 2>&1
code=$?
set -e
[ $code -eq 2 ] && grep -q "ingot doctor takes no arguments" "$work/bad.txt" || fail "bad argument: exit $code"
echo "ingot doctor: ok"
