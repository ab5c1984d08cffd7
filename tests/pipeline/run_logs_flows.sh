#!/bin/bash
# The run's logs, end to end: with `logging: {tensorboard: true, csv: true}`, metrics.csv has a
# row per train_step / epoch / eval record of metrics.jsonl, console.log holds what the run printed,
# every metrics record has a "time", and the TensorBoard event file reads back (with a standard-
# library reader always, and with the tensorboard package where a Python has it). A resume appends
# to console.log and metrics.csv (no second header) and adds an event file.
# Usage: run_logs_flows.sh INGOT_BINARY
set -euo pipefail
ingot=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

config=tests/pipeline/configs/tiny_mlp_logs.yaml
run=$work/tiny_mlp_logs
start=$(date +%s)
"$ingot" run $config --runs-dir "$work" > "$work/out.txt" 2> "$work/err.txt" || { cat "$work/out.txt" "$work/err.txt"; fail "run"; }
end=$(($(date +%s) + 1))

# console.log: the run's output from its header on (the lines before name the config and backend).
grep -q "^evaluate: " "$run/console.log" || fail "no 'evaluate:' line in console.log: $(cat "$run/console.log")"
grep -q "^run: tiny_mlp_logs " "$run/console.log" || fail "no header in console.log"
tail -c "$(wc -c < "$run/console.log")" "$work/out.txt" | cmp -s - "$run/console.log" ||
  fail "console.log is not the end of what the run printed"

python3 - "$run" "$start" "$end" <<'PY' || fail "metrics / csv / event file: see above"
import csv, glob, json, os, struct, sys

run, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
records = [json.loads(l) for l in open(os.path.join(run, "metrics.jsonl"))]
for r in records:
    assert isinstance(r.get("time"), float) and start <= r["time"] <= end, f"time missing or off: {r}"
    assert next(iter(r)) == "event", r

# metrics.csv: the header, then the train_step / epoch / eval records in order.
rows = list(csv.reader(open(os.path.join(run, "metrics.csv"))))
assert rows[0] == ["event", "epoch", "step", "time", "loss", "lr", "accuracy", "images_per_s", "split"], rows[0]
want = [r for r in records if r["event"] in ("train_step", "epoch", "eval")]
assert len(rows) - 1 == len(want) and sum(r["event"] == "train_step" for r in want) == 96, (len(rows), len(want))
for row, r in zip(rows[1:], want):
    assert row[0] == r["event"] and int(row[1]) == r["epoch"] and int(row[2]) == r["step"], (row, r)
    assert float(row[3]) == r["time"] and float(row[4]) == r["loss"], (row, r)
    assert (row[6] != "") == (r["event"] == "eval"), row

# The event file, read with the standard library: TFRecords with masked CRC-32C, Event protos.
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

def fields(m):
    out, at = {}, 0
    def varint():
        nonlocal at
        v = shift = 0
        while True:
            b = m[at]; at += 1
            v |= (b & 0x7F) << shift; shift += 7
            if not b & 0x80: return v
    while at < len(m):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0: out[field] = varint()
        elif wire == 1: out[field] = m[at:at + 8]; at += 8
        elif wire == 5: out[field] = m[at:at + 4]; at += 4
        elif wire == 2:
            n = varint(); out[field] = m[at:at + n]; at += n
        else: raise AssertionError(f"wire type {wire}")
    return out

files = glob.glob(os.path.join(run, "tensorboard", "events.out.tfevents.*"))
assert len(files) == 1, files
data, at, events = open(files[0], "rb").read(), 0, []
while at < len(data):
    (n,) = struct.unpack_from("<Q", data, at)
    assert struct.unpack_from("<I", data, at + 8)[0] == masked(data[at:at + 8]), "length crc"
    body = data[at + 12:at + 12 + n]
    assert struct.unpack_from("<I", data, at + 12 + n)[0] == masked(body), "data crc"
    events.append(fields(body)); at += 16 + n
assert events[0][3] == b"brain.Event:2", events[0]
scalars = {}
for e in events[1:]:
    v = fields(fields(e[5])[1])
    scalars.setdefault(v[1].decode(), []).append((e[2], struct.unpack("<f", v[2])[0], struct.unpack("<d", e[1])[0]))
steps = [r for r in records if r["event"] == "train_step"]
assert [s for s, _, _ in scalars["train/loss"]] == [r["step"] for r in steps]
assert [x for _, x, _ in scalars["train/loss"]] == [struct.unpack("<f", struct.pack("<f", r["loss"]))[0] for r in steps]
assert [t for _, _, t in scalars["train/loss"]] == [r["time"] for r in steps]
assert len(scalars["eval/accuracy"]) == sum(r["event"] == "eval" for r in records) >= 1
assert set(scalars) == {"train/loss", "train/lr", "train/images_per_s", "eval/loss", "eval/accuracy", "epoch/loss"}
print(f"event file: {len(events)} events, checked")
PY

# The tensorboard package reads the folder too: scripts/test installs it in the test venv.
tb_python=
for py in "${INGOT_BUILD_DIR:-build}/test-venv/bin/python" /usr/bin/python3; do
  if [ -x "$py" ] && "$py" -c 'import tensorboard' 2> /dev/null; then tb_python=$py; break; fi
done
if [ -n "$tb_python" ]; then
  "$tb_python" - "$run/tensorboard" <<'PY' || fail "tensorboard could not read the event file"
import sys
from tensorboard.backend.event_processing import event_accumulator
acc = event_accumulator.EventAccumulator(sys.argv[1])
acc.Reload()
loss = acc.Scalars("train/loss")
assert len(loss) == 96 and loss[0].step == 1 and loss[-1].step == 96, len(loss)
assert len(acc.Scalars("eval/accuracy")) >= 1
print(f"tensorboard: {len(loss)} train/loss scalars")
PY
fi

# A resume (of the finished run) appends: console.log, metrics.csv without a second header, and a
# second event file.
"$ingot" run $config --runs-dir "$work" --resume > "$work/out2.txt" 2>&1 || { cat "$work/out2.txt"; fail "resume"; }
[ "$(grep -c '^run: tiny_mlp_logs ' "$run/console.log")" -eq 2 ] || fail "console.log was not appended to"
[ "$(grep -c '^event,' "$run/metrics.csv")" -eq 1 ] || fail "a second header in metrics.csv"
[ "$(grep -c '^train_step,' "$run/metrics.csv")" -eq 96 ] || fail "train_step rows changed by the resume"
# (a resume within the same second as the run appends to the same file name)
[ "$(cat "$run"/tensorboard/events.out.tfevents.* | grep -a -o 'brain.Event:2' | wc -l)" -eq 2 ] ||
  fail "the resume did not start a new event stream: $(ls "$run/tensorboard")"
echo "run logs flows: ok"
# Last, so that it never hides a failure of the checks above.
[ -n "$tb_python" ] ||
  echo "INGOT_SKIP: tensorboard not installed: scripts/test puts it in build/test-venv (the event file was checked with the standard-library reader)"
