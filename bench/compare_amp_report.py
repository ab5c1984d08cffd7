"""bench/compare --levers' tables: bf16 autocast against f32 and against PyTorch's autocast (train
images/s, the ratios against the issue's targets, which backend ran Ingot's ops; a CPU without bf16
kernels, where Ingot refuses bf16, says so), and gradient checkpointing against plain training (step
peak, activation bytes, step time, the largest batch within a memory limit, against the targets),
from the runs' JSON records (`ingot bench --json`, bench/torch_bench.py)."""
import statistics

BEGIN, END = "<!-- compare-levers:begin -->", "<!-- compare-levers:end -->"
BF16_WORKLOADS = ("cnn", "resnet8")
# The issues' targets: bf16 training >= 1.5x Ingot's f32 and >= 2x PyTorch's bf16 autocast;
# checkpointing: a step peak <= 0.6x plain's for <= 35% more step time, and a largest batch within
# the same memory >= 1.6x plain's.
TARGET_SELF, TARGET_TORCH = 1.5, 2.0
TARGET_PEAK, TARGET_SLOWDOWN, TARGET_BATCH = 0.6, 35.0, 1.6
# What `ingot bench` says when no backend here has bf16 kernels (exit 2).
REFUSED_BF16 = "mixed precision would be slower than f32"
# bf16 table columns: (key, label); keys index the runs {(workload, key): [record, ...]}.
SIDES = (("ingot-f32", "Ingot f32"), ("ingot-bf16", "Ingot bf16"), ("torch-f32", "PyTorch f32"),
         ("torch-bf16", "PyTorch bf16 autocast"))


def at(record, *path):
    """The number at key path in one JSON record, or None."""
    node = record
    for p in path:
        node = node.get(p) if isinstance(node, dict) else None
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None


def median(records, *path):
    vals = [v for v in (at(r, *path) for r in records if r) if v is not None]
    return statistics.median(vals) if vals else None


def values(records, *path):
    return [v for v in (at(r, *path) for r in records if r) if v is not None]


def fastest(records, *path, lowest=False):
    """The best run's value (others' load only ever adds time, so on a busy machine the fastest run
    is the nearest to an idle one)."""
    vals = values(records, *path)
    return (min(vals) if lowest else max(vals)) if vals else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, digits=0, scale=1.0):
    return "n/a" if v is None else "{:,.{}f}".format(v / scale, digits)


def cell(records, *path):
    """median (min-max over runs) of a rate."""
    vals = values(records, *path)
    if not vals:
        return "n/a"
    text = fmt(statistics.median(vals))
    return text + (" (%s-%s)" % (fmt(min(vals)), fmt(max(vals))) if len(vals) > 1 else "")


def verdict(value, target, higher_is_better=True):
    if value is None:
        return "missing"
    return "pass" if (value >= target if higher_is_better else value <= target) else "miss"


def ops_line(records):
    """Ingot's ops by backend (the last run's), e.g. `cpu_onednn 314, reference 64`."""
    for r in reversed([r for r in records if r]):
        ops = r.get("ops_by_backend")
        if isinstance(ops, dict) and ops:
            return ", ".join("%s %d" % kv for kv in sorted(ops.items(), key=lambda kv: -kv[1]))
    return "n/a"


def refusal(records):
    """Why Ingot refused the runs (`{"refused": message}` records), or None."""
    return next((r["refused"] for r in records if r and "refused" in r), None)


def variant_tag(v):
    """A checkpointing variant (0 plain, N segments, "blocks") as a file-name tag."""
    return "plain" if v == 0 else ("blocks" if v == "blocks" else "seg%d" % v)


def dtype_problems(runs):
    """Runs whose reported dtype is not what their column says (a setting that did not apply)."""
    out = []
    for (w, key), records in sorted(runs.items()):
        want = "bf16 autocast" if key.endswith("bf16") else "f32"
        seen = {r.get("dtype") for r in records if r and "refused" not in r}
        if seen and seen != {want}:
            out.append("%s %s reported dtype %s" % (w, key, ", ".join(sorted(str(s) for s in seen))))
    return out


def bf16_table(runs):
    """(markdown, misses, complete) for {(workload, side key): [record, ...]}. Ratios of the medians
    (verdict) and, in parentheses, of the fastest runs."""
    lines = ["| workload | %s | Ingot bf16 / Ingot f32 (fastest runs) | target | | Ingot bf16 / PyTorch bf16 "
             "(fastest runs) | target | | "
             "Ingot bf16 ops by backend |" % " | ".join("%s train img/s" % label for _, label in SIDES),
             "|---|" + "---|" * (len(SIDES) + 7)]
    misses, complete = [], True
    for w in BF16_WORKLOADS:
        why = refusal(runs.get((w, "ingot-bf16"), []))
        if why:  # no bf16 kernels on this CPU: nothing to compare, and nothing missing
            lines.append("| %s | %s | Ingot refused bf16 here: %s | | | | | | |" % (
                w, " | ".join(cell(runs.get((w, k), []), "train", "images_per_s", "median") for k, _ in SIDES), why))
            complete = complete and None not in (median(runs.get((w, k), []), "train", "images_per_s", "median")
                                                 for k in ("ingot-f32", "torch-f32"))
            continue
        med = {k: median(runs.get((w, k), []), "train", "images_per_s", "median") for k, _ in SIDES}
        best = {k: fastest(runs.get((w, k), []), "train", "images_per_s", "median") for k, _ in SIDES}
        r_self, r_torch = ratio(med["ingot-bf16"], med["ingot-f32"]), ratio(med["ingot-bf16"], med["torch-bf16"])
        b_self, b_torch = ratio(best["ingot-bf16"], best["ingot-f32"]), ratio(best["ingot-bf16"], best["torch-bf16"])
        v_self, v_torch = verdict(r_self, TARGET_SELF), verdict(r_torch, TARGET_TORCH)
        complete = complete and None not in med.values()
        misses += ["%s bf16 vs %s" % (w, what) for what, v in (("Ingot f32", v_self), ("PyTorch bf16", v_torch))
                   if v != "pass"]
        lines.append("| %s | %s | %s (%s) | >= %.1f | %s | %s (%s) | >= %.1f | %s | %s |" % (
            w, " | ".join(cell(runs.get((w, k), []), "train", "images_per_s", "median") for k, _ in SIDES),
            fmt(r_self, 2), fmt(b_self, 2), TARGET_SELF, v_self, fmt(r_torch, 2), fmt(b_torch, 2), TARGET_TORCH,
            v_torch,
            ops_line(runs.get((w, "ingot-bf16"), []))))
    return "\n".join(lines), misses, complete


def bf16_detail(runs):
    """Per side: train ms/step, inference images/s (under the same autocast), activation memory."""
    lines = ["| workload | side | dtype | train ms/step | inference img/s | activation MiB | step peak MiB |",
             "|---|---|---|---|---|---|---|"]
    for w in BF16_WORKLOADS:
        for key, label in SIDES:
            rs = [r for r in runs.get((w, key), []) if r]
            dtype = (rs[-1].get("dtype") if rs else None) or "n/a"
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                w, label, dtype, fmt(median(rs, "train", "ms_per_step", "median"), 2),
                cell(rs, "inference", "images_per_s", "median"),
                fmt(median(rs, "memory", "activation_bytes"), 1, 2**20),
                fmt(median(rs, "memory", "step_peak_bytes"), 1, 2**20)))
    return "\n".join(lines)


def checkpoint_label(v, records):
    """What a variant ran: "plain", "3 segments (balanced: 3 used)", "per block (11 segments)"."""
    if v == 0:
        return "plain"
    info = next((r.get("checkpointing") for r in records if r and r.get("checkpointing")), None)
    if isinstance(info, dict):  # Ingot's plan
        used = len(info.get("segments") or [])
        return ("per block (%d segments)" % used if v == "blocks"
                else "%d segments (by measured bytes: %d used)" % (v, used))
    what = "per block" if v == "blocks" else "%d segments" % v
    return what + (" (%s)" % info if info else "")


def percent(x):
    return "n/a" if x is None else "%+.0f%%" % x


def checkpoint_table(runs, segments):
    """(markdown, misses, complete) for {(side, variant): [record, ...]}, side in ingot/torch,
    variant 0 = plain, N segments or "blocks", and {("scaling", variant): [record]} (Ingot's
    `--scaling` runs). Step times and slow-downs: medians (verdict) and, in parentheses, the fastest
    runs'."""
    lines = ["| side | checkpointing | step peak MiB | vs plain | activation MiB | train ms/step (fastest) | "
             "slow-down (fastest) | largest batch | vs plain | target: peak <= %.1fx, slow-down <= %.0f%%, "
             "batch >= %.1fx |" % (TARGET_PEAK, TARGET_SLOWDOWN, TARGET_BATCH),
             "|---|---|---|---|---|---|---|---|---|---|"]
    misses, complete = [], True
    variants = [0] + list(segments) + ["blocks"]
    limit = None
    for side, label in (("ingot", "Ingot"), ("torch", "PyTorch")):
        base = runs.get((side, 0), [])
        b_peak = median(base, "memory", "step_peak_bytes")
        b_ms = median(base, "train", "ms_per_step", "median")
        b_best = fastest(base, "train", "ms_per_step", "median", lowest=True)
        b_batch = median(runs.get(("scaling", 0), []), "scaling", "max_batch") if side == "ingot" else None
        for v in variants:
            rs = runs.get((side, v), [])
            act, peak = median(rs, "memory", "activation_bytes"), median(rs, "memory", "step_peak_bytes")
            ms = median(rs, "train", "ms_per_step", "median")
            best = fastest(rs, "train", "ms_per_step", "median", lowest=True)
            scaling = runs.get(("scaling", v), []) if side == "ingot" else []
            batch = median(scaling, "scaling", "max_batch")
            limit = limit or median(scaling, "scaling", "memory_limit_bytes")
            complete = complete and None not in (peak, ms) and (side != "ingot" or batch is not None)
            batch_cell = fmt(batch) if side == "ingot" else ""  # (--scaling is Ingot's)
            if v == 0:
                lines.append("| %s | plain | %s | | %s | %s (%s) | | %s | | |" % (
                    label, fmt(peak, 1, 2**20), fmt(act, 1, 2**20), fmt(ms, 1), fmt(best, 1), batch_cell))
                continue
            p_ratio = ratio(peak, b_peak)
            slow = None if ms is None or not b_ms else 100.0 * (ms / b_ms - 1.0)
            b_slow = None if best is None or not b_best else 100.0 * (best / b_best - 1.0)
            b_ratio = ratio(batch, b_batch)
            checks = [verdict(p_ratio, TARGET_PEAK, False), verdict(slow, TARGET_SLOWDOWN, False)]
            if side == "ingot":
                checks.append(verdict(b_ratio, TARGET_BATCH))
            v_text = "missing" if "missing" in checks else ("pass" if set(checks) == {"pass"} else "miss")
            if side == "ingot" and v_text != "pass":
                misses.append("Ingot %s" % ("per block" if v == "blocks" else "%d segments" % v))
            lines.append("| %s | %s | %s | %s | %s | %s (%s) | %s (%s) | %s | %s | %s |" % (
                label, checkpoint_label(v, rs), fmt(peak, 1, 2**20), "n/a" if p_ratio is None else "%.2fx" % p_ratio,
                fmt(act, 1, 2**20), fmt(ms, 1), fmt(best, 1), percent(slow), percent(b_slow), batch_cell,
                "" if side != "ingot" else ("n/a" if b_ratio is None else "%.2fx" % b_ratio), v_text))
    if limit:
        lines += ["", "Largest batch within %.1f MiB (what plain training allocated at its peak)." % (limit / 2**20)]
    return "\n".join(lines), misses, complete
