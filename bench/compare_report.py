"""bench/compare's tables: the rows it compares, medians over runs, ratios against the issue's
targets, the PyTorch sweep, the scaling figures, and the marked sections of bench/RESULTS.md."""
import os
import statistics

# (label, workload config, part, batch flag, target ratio). Throughput ratios are Ingot / PyTorch
# images/s (higher is better); latency ratios are Ingot ms / PyTorch ms (lower is better).
ROWS = [
    ("MLP train", "mlp", "train", "batch_size", 2.0),
    ("CNN train", "cnn", "train", "batch_size", 1.5),
    ("ResNet-8 train", "resnet8", "train", "batch_size", 1.5),
    ("MLP inference", "mlp", "inference", "infer_batch", 2.0),
    ("CNN inference", "cnn", "inference", "infer_batch", 2.0),
    ("MLP latency", "mlp", "latency", None, 0.5),
    ("CNN latency", "cnn", "latency", None, 0.5),
]
BEGIN, END = "<!-- compare:begin -->", "<!-- compare:end -->"
SCALING_BEGIN, SCALING_END = "<!-- compare-scaling:begin -->", "<!-- compare-scaling:end -->"


def metric(result, part):
    """The run's median for a part: images/s (train, inference) or ms (batch-1 latency)."""
    try:
        if part == "latency":
            return float(result["latency_b1_ms"]["median"])
        return float(result[part]["images_per_s"]["median"])
    except (KeyError, TypeError, ValueError):
        return None


def better(part, a, b):
    """Is a better than b for this part?"""
    return b is None or (a is not None and (a < b if part == "latency" else a > b))


def fmt_value(v, part):
    if v is None:
        return "n/a"
    if part == "latency":
        return "%.3f ms" % v
    return "{:,.0f}".format(v)


def spread(values, part):
    if len(values) < 2:
        return ""
    return " (%s-%s)" % (fmt_value(min(values), part).replace(" ms", ""), fmt_value(max(values), part))


def row_stats(runs, label_config, part):
    """Median and all values over runs of a side for one row."""
    vals = [metric(r, part) for r in runs.get(label_config, []) if r is not None]
    vals = [v for v in vals if v is not None]
    return (statistics.median(vals) if vals else None), vals


def compare_table(ingot_runs, torch_runs, batches):
    """Markdown table of every row; returns (text, complete, misses)."""
    lines = ["| workload | batch | Ingot | PyTorch | Ingot / PyTorch | target | |",
             "|---|---|---|---|---|---|---|"]
    complete, misses = True, []
    for label, cfg, part, batch_key, target in ROWS:
        mi, vi = row_stats(ingot_runs, cfg, part)
        mt, vt = row_stats(torch_runs, cfg, part)
        unit = "ms, batch 1" if part == "latency" else "images/s"
        batch = 1 if batch_key is None else batches.get((cfg, batch_key), "?")
        if mi is None or mt is None:
            complete = False
            ratio, verdict = "n/a", "missing"
        else:
            r = mi / mt
            ok = r <= target if part == "latency" else r >= target
            ratio, verdict = "%.2f" % r, "pass" if ok else "miss"
            if not ok:
                misses.append(label)
        lines.append("| %s (%s) | %s | %s%s | %s%s | %s | %s %.1f | %s |" % (
            label, unit, batch, fmt_value(mi, part), spread(vi, part), fmt_value(mt, part), spread(vt, part), ratio,
            "<=" if part == "latency" else ">=", target, verdict))
    return "\n".join(lines), complete, misses


def median_at(runs, path):
    """Median over `runs` (JSON records) of the number at key path `path`; None when no run has one."""
    vals = []
    for r in runs:
        node = r
        for p in path:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, (int, float)):
            vals.append(float(node))
    return statistics.median(vals) if vals else None


def detail_table(ingot_runs, torch_runs):
    """Per-workload step times and peak memory (medians over runs)."""
    lines = ["| workload | side | train ms/step | inference ms/batch | latency p90 ms | peak RSS MiB | "
             "peak allocated MiB | allocator cache hits |", "|---|---|---|---|---|---|---|---|"]

    def f(v, scale=1.0, digits=2):
        return "n/a" if v is None else "%.*f" % (digits, v / scale)

    for cfg in sorted({c for _, c, _, _, _ in ROWS}, key=["mlp", "cnn", "resnet8"].index):
        for side, runs in (("Ingot", ingot_runs.get(cfg, [])), ("PyTorch", torch_runs.get(cfg, []))):
            runs = [r for r in runs if r]
            hits = median_at(runs, ["memory", "train_cache_hit_rate"])
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                cfg, side, f(median_at(runs, ["train", "ms_per_step", "median"])),
                f(median_at(runs, ["inference", "ms_per_batch", "median"])), f(median_at(runs, ["latency_b1_ms", "p90"]), 1, 3),
                f(median_at(runs, ["memory", "peak_rss_bytes"]), 2**20, 0),
                f(median_at(runs, ["memory", "peak_allocated_bytes"]), 2**20, 0),
                "n/a" if hits is None else "%.1f%%" % (100 * hits)))
    return "\n".join(lines)


def sweep_table(points, chosen):
    """points: {env key: {(cfg, part): value}}; chosen: {(cfg, part): env key}."""
    cols = [(cfg, part, label) for label, cfg, part, _, _ in ROWS]
    lines = ["| PyTorch configuration (allocator/OpenBLAS/BLAS threads/core type/torch threads) | "
             + " | ".join("%s%s" % (label, " ms" if part == "latency" else " img/s") for cfg, part, label in cols)
             + " |", "|---" * (len(cols) + 1) + "|"]
    for key in points:
        cells = []
        for cfg, part, _ in cols:
            v = points[key].get((cfg, part))
            text = fmt_value(v, part).replace(" ms", "")
            cells.append("**%s**" % text if chosen.get((cfg, part)) == key else text)
        lines.append("| %s | %s |" % (key, " | ".join(cells)))
    return "\n".join(lines)


def scaling_table(entries):
    """entries: list of (model, what, value, ingot result, torch result)."""
    lines = ["| model | %s | Ingot ms/step | Ingot img/s | PyTorch ms/step | PyTorch img/s | train ratio | "
             "Ingot infer img/s | PyTorch infer img/s | infer ratio |" % "setting",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def g(r, *path):
        for p in path:
            r = r.get(p) if isinstance(r, dict) else None
        return r if isinstance(r, (int, float)) else None

    def f(v, d=1):
        return "n/a" if v is None else "{:,.{}f}".format(v, d)

    for model, setting, ri, rt in entries:
        ti, tt = g(ri, "train", "images_per_s", "median"), g(rt, "train", "images_per_s", "median")
        ii, it = g(ri, "inference", "images_per_s", "median"), g(rt, "inference", "images_per_s", "median")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            model, setting, f(g(ri, "train", "ms_per_step", "median"), 2), f(ti, 0),
            f(g(rt, "train", "ms_per_step", "median"), 2), f(tt, 0), "n/a" if not (ti and tt) else "%.2f" % (ti / tt),
            f(ii, 0), f(it, 0), "n/a" if not (ii and it) else "%.2f" % (ii / it)))
    return "\n".join(lines)


def replace_section(path, text, begin, end):
    """Puts text between the markers of path (appending the markers at the end if absent)."""
    old = open(path).read() if os.path.exists(path) else ""
    block = "%s\n%s\n%s" % (begin, text.strip("\n"), end)
    if begin in old and end in old and old.index(begin) < old.index(end):
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + ("\n\n" if old else "") + block + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)
