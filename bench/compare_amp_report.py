"""bench/compare --levers' tables: bf16 autocast against f32 and against PyTorch's autocast (train
images/s, the ratios against the issue's targets, which backend ran Ingot's ops), and gradient
checkpointing against plain training (activation bytes, step peak, step time, cut and slow-down
against the targets), from the runs' JSON records (`ingot bench --json`, bench/torch_bench.py)."""
import statistics

BEGIN, END = "<!-- compare-levers:begin -->", "<!-- compare-levers:end -->"
BF16_WORKLOADS = ("cnn", "resnet8")
# The targets: bf16 training >= 1.5x Ingot's f32 and >= 2x PyTorch's bf16 autocast;
# checkpointing cuts activation memory >= 40% for <= 35% more step time.
TARGET_SELF, TARGET_TORCH = 1.5, 2.0
TARGET_CUT, TARGET_SLOWDOWN = 40.0, 35.0
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


def dtype_problems(runs):
    """Runs whose reported dtype is not what their column says (a setting that did not apply)."""
    out = []
    for (w, key), records in sorted(runs.items()):
        want = "bf16 autocast" if key.endswith("bf16") else "f32"
        seen = {r.get("dtype") for r in records if r}
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


def checkpoint_table(runs, segments):
    """(markdown, misses, complete) for {(side, segments): [record, ...]}, side in ingot/torch,
    segments 0 = plain. Step times and slow-downs: medians (verdict) and, in parentheses, the
    fastest runs'."""
    lines = ["| side | checkpointing | activation MiB | cut | step peak MiB | peak cut | train ms/step (fastest) | "
             "slow-down (fastest) | "
             "target: cut >= %.0f%%, slow-down <= %.0f%% |" % (TARGET_CUT, TARGET_SLOWDOWN),
             "|---|---|---|---|---|---|---|---|---|"]
    misses, complete = [], True
    for side, label in (("ingot", "Ingot"), ("torch", "PyTorch")):
        base = runs.get((side, 0), [])
        b_act, b_peak = median(base, "memory", "activation_bytes"), median(base, "memory", "step_peak_bytes")
        b_ms = median(base, "train", "ms_per_step", "median")
        b_best = fastest(base, "train", "ms_per_step", "median", lowest=True)
        for s in [0] + list(segments):
            rs = runs.get((side, s), [])
            act, peak = median(rs, "memory", "activation_bytes"), median(rs, "memory", "step_peak_bytes")
            ms = median(rs, "train", "ms_per_step", "median")
            best = fastest(rs, "train", "ms_per_step", "median", lowest=True)
            complete = complete and None not in (act, ms)
            if s == 0:
                lines.append("| %s | plain | %s | | %s | | %s (%s) | | |" % (
                    label, fmt(act, 1, 2**20), fmt(peak, 1, 2**20), fmt(ms, 1), fmt(best, 1)))
                continue
            cut = None if act is None or not b_act else 100.0 * (1.0 - act / b_act)
            pcut = None if peak is None or not b_peak else 100.0 * (1.0 - peak / b_peak)
            slow = None if ms is None or not b_ms else 100.0 * (ms / b_ms - 1.0)
            b_slow = None if best is None or not b_best else 100.0 * (best / b_best - 1.0)
            ok = verdict(cut, TARGET_CUT) == "pass" and verdict(slow, TARGET_SLOWDOWN, False) == "pass"
            v = "missing" if None in (cut, slow) else ("pass" if ok else "miss")
            if side == "ingot" and v != "pass":
                misses.append("Ingot %d segments" % s)
            method = next((r.get("checkpointing") for r in rs if r and r.get("checkpointing")), None)
            lines.append("| %s | %d segments%s | %s | %s | %s | %s | %s | %s | %s |" % (
                label, s, "" if side == "ingot" or not method else " (%s)" % method, fmt(act, 1, 2**20),
                "n/a" if cut is None else "%.0f%%" % cut, fmt(peak, 1, 2**20),
                "n/a" if pcut is None else "%.0f%%" % pcut, "%s (%s)" % (fmt(ms, 1), fmt(best, 1)),
                "%s (%s)" % tuple("n/a" if x is None else "%+.0f%%" % x for x in (slow, b_slow)), v))
    return "\n".join(lines), misses, complete
