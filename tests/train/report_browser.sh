#!/bin/bash
# The run report in a browser: a tiny training, `ingot report` (one run, then two compared), and
# headless Chromium renders the pages. The dumped DOM must hold the charts (svg elements by id,
# polylines with many points, a legend for two runs) and the screenshot, decoded with zlib, must
# show the curves' colour. Chromium's stderr (sandbox warnings) is ignored.
# Usage: report_browser.sh INGOT_BINARY
set -euo pipefail
ingot=$1
browser=$(command -v chromium-headless-shell || true)
if [[ -z "$browser" ]]; then
  echo "INGOT_SKIP: chromium-headless-shell not installed (scripts/test installs it)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

config=tests/pipeline/configs/tiny_mlp_logs.yaml
for run_lr in a:0.01 b:0.003; do
  tag=${run_lr%%:*} lr=${run_lr#*:}
  "$ingot" run $config --runs-dir "$work" --set name=tiny_$tag --set train.optimizer.lr=$lr \
    > "$work/run_$tag.txt" 2>&1 || { cat "$work/run_$tag.txt"; fail "run with lr $lr"; }
done
run=$work/tiny_a
out=$("$ingot" report "$run") || fail "ingot report $run"
[[ "$out" == "report: $run/report.html" ]] || fail "ingot report printed '$out'"
"$ingot" report "$run" "$work/tiny_b" -o "$work/compare.html" > /dev/null || fail "ingot report of two runs"
if "$ingot" report "$work/no_such_run" 2> "$work/err.txt"; then fail "a missing run folder was accepted"; fi
[[ $(wc -l < "$work/err.txt") == 1 ]] && grep -q "no_such_run does not exist" "$work/err.txt" ||
  fail "a missing run folder: $(cat "$work/err.txt")"

render() {  # render PAGE: PAGE.dom and PAGE.png
  timeout 30 "$browser" --no-sandbox --disable-gpu --headless --dump-dom "file://$1" > "$1.dom" 2> /dev/null ||
    fail "chromium --dump-dom $1"
  timeout 30 "$browser" --no-sandbox --disable-gpu --headless --screenshot="$1.png" --window-size=1200,3000 \
    "file://$1" > /dev/null 2>&1 || fail "chromium --screenshot $1"
}
render "$run/report.html"
render "$work/compare.html"

python3 - "$run/report.html" "$work/compare.html" <<'PY' || fail "the rendered pages: see above"
import re, struct, sys, zlib

def polylines(dom, svg_id):
    m = re.search(r'<svg id="%s"[^>]*>(.*?)</svg>' % svg_id, dom, re.S)
    assert m, f"no <svg id={svg_id}> in the DOM"
    return [len(p.split()) for p in re.findall(r'<polyline[^>]*points="([^"]*)"', m.group(1))]

def pixels(png_path):
    """RGB(A) rows of an 8-bit, non-interlaced PNG, unfiltered."""
    data = open(png_path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 3 if colour == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows

def count_colour(png_path, rgb, tol=24):
    w, h, bpp, rows = pixels(png_path)
    n = 0
    for line in rows:
        for x in range(0, w * bpp, bpp):
            if abs(line[x] - rgb[0]) <= tol and abs(line[x + 1] - rgb[1]) <= tol and abs(line[x + 2] - rgb[2]) <= tol:
                n += 1
    return n, w * h

single, compare = sys.argv[1], sys.argv[2]
dom = open(single + ".dom").read()
steps = 96  # tiny_mlp_logs: 3 epochs of 32 batches, log_every 1
assert polylines(dom, "plot-train-loss") == [steps], polylines(dom, "plot-train-loss")
assert polylines(dom, "plot-lr") == [steps], polylines(dom, "plot-lr")
assert polylines(dom, "plot-throughput") == [steps], polylines(dom, "plot-throughput")
assert polylines(dom, "plot-eval-accuracy") == [3], polylines(dom, "plot-eval-accuracy")
assert len(polylines(dom, "plot-memory")) == 3, polylines(dom, "plot-memory")
assert 'class="confusion"' in dom and "http://" not in dom and "https://" not in dom
cdom = open(compare + ".dom").read()
assert polylines(cdom, "plot-train-loss") == [steps, steps], polylines(cdom, "plot-train-loss")
assert 'class="legend"' in cdom and 'class="config-diff"' in cdom and "train.optimizer.lr" in cdom

blue, red = (0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28)
n_blue, total = count_colour(single + ".png", blue)
n_red, _ = count_colour(compare + ".png", red)
white, _ = count_colour(single + ".png", (255, 255, 255), tol=2)
print(f"single run: {n_blue} curve-blue pixels of {total}; two runs: {n_red} second-run red pixels")
assert 3000 < n_blue < total // 10, f"{n_blue} blue pixels: the curves are not drawn (or the page is blue)"
assert n_red > 1500, f"{n_red} red pixels: the second run's curves are not drawn"
assert white > total // 3, "the page is not mostly white"
PY
echo "report_in_browser: ok"
