"""bench/compare --device cuda's tables: Ingot against the vendor libraries (the ratio counters of
the bench_cuda_* programs), Ingot's ops against PyTorch's (bench_cuda_* joined with
bench/torch_gpu_ops.py by name), and training / inference of the workloads (`ingot bench` and
bench/torch_bench.py --device cuda). Pure functions of the programs' JSON: no torch, no GPU."""

import compare_report as R

GPU_BEGIN, GPU_END = "<!-- compare-gpu:begin -->", "<!-- compare-gpu:end -->"
# What each table must hold for the report to be complete.
VENDOR_ROWS = ["matmul/%s/%d" % (m, n) for n in (4096, 8192) for m in ("f32", "tf32", "bf16")] + \
              ["add/f32/64Mi", "add/bf16/64Mi_broadcast_row"] + \
              ["conv/%s/%s/%s" % (d, t, l) for l in ("nchw", "nhwc") for t in ("f32", "f16")
               for d in ("fwd", "bwd_data", "bwd_weight")]
TORCH_ROWS = ["softmax/%s/16384x4096" % t for t in ("f32", "bf16")] + \
             ["layer_norm/%s/16384x4096" % t for t in ("f32", "bf16")] + ["sum/f32/1GiB", "tiny_add/f32/1"] + \
             ["conv/%s/%s/%s" % (d, t, l) for l in ("nchw", "nhwc") for t in ("f32", "f16")
              for d in ("fwd", "bwd_data", "bwd_weight")]
E2E_PARTS = (("train", "train images/s"), ("inference", "inference images/s"), ("latency", "latency ms, batch 1"))
SUFFIXES = ("/manual_time", "/real_time")


def gbench_results(doc):
    """{name: counters} from Google Benchmark's JSON (--benchmark_out_format=json): the name
    without "BM_" and the timing suffix; a failed benchmark maps to {"error": message}."""
    out = {}
    for b in (doc or {}).get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = b.get("name", "")
        name = name[3:] if name.startswith("BM_") else name
        for s in SUFFIXES:
            if name.endswith(s):
                name = name[:-len(s)]
        if b.get("error_occurred"):
            out[name] = {"error": b.get("error_message") or "error"}
        else:
            out[name] = {k: v for k, v in b.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return out


def rate_keys(counters):
    """(unit, reference name) of a paired benchmark's counters: ingot_<unit> and <reference>_<unit>."""
    unit = next((k[len("ingot_"):] for k in counters if k.startswith("ingot_") and k != "ingot_ms"), None)
    if unit is None:
        return None, None
    ref = next((k[:-len(unit) - 1] for k in counters if k.endswith("_" + unit) and not k.startswith("ingot_")), None)
    return unit, ref


def fmt(v, digits=2):
    return "n/a" if v is None else "{:,.{}f}".format(v, digits)


def vendor_table(results):
    """Ingot against cuBLAS / cudaMemcpy / cuDNN, from the ratio counters. Returns (text, misses, missing)."""
    lines = ["| benchmark | Ingot | vendor library | Ingot / vendor | target | |", "|---|---|---|---|---|---|"]
    misses, missing = [], []
    for name in VENDOR_ROWS:
        c = results.get(name)
        if c is None or "error" in c or "ratio" not in c:
            missing.append(name)
            why = "not run" if c is None else c.get("error", "no ratio counter")
            lines.append("| %s | n/a | n/a | n/a | | %s |" % (name, why.replace("|", "/")))
            continue
        unit, ref = rate_keys(c)
        target = c.get("target") or 0.0
        verdict = "" if not target else ("pass" if c["ratio"] >= target else "miss")
        if verdict == "miss":
            misses.append(name)
        lines.append("| %s | %s %s (%s ms) | %s: %s %s (%s ms) | %.3f | %s | %s |" % (
            name, fmt(c.get("ingot_" + unit)), unit, fmt(c.get("ingot_ms"), 3), ref, fmt(c.get("%s_%s" % (ref, unit))),
            unit, fmt(c.get(ref + "_ms"), 3), c["ratio"], ">= %.2f" % target if target else "-", verdict))
    return "\n".join(lines), misses, missing


def torch_ops_table(ingot, torch_doc):
    """Ingot's per-call time against PyTorch's for the same op. Returns (text, missing)."""
    theirs = (torch_doc or {}).get("results", {})
    lines = ["| op | Ingot | PyTorch | PyTorch time / Ingot time |", "|---|---|---|---|"]
    missing = []

    def cell(c, tiny):
        if c is None:
            return "not run"
        if "error" in c:
            return "error: " + str(c["error"]).replace("|", "/")[:80]
        ms = c.get("ingot_ms", c.get("ms"))
        if ms is None:
            return "n/a"
        if tiny:
            return "%.2f us/op" % (1e3 * ms)
        rate = next(((k, v) for k, v in c.items() if k in ("GB/s", "TFLOP/s", "ingot_GB/s", "ingot_TFLOP/s")), None)
        return "%.3f ms%s" % (ms, " (%s %s)" % (fmt(rate[1]), rate[0].replace("ingot_", "")) if rate else "")

    for name in TORCH_ROWS:
        a, b = ingot.get(name), theirs.get(name)
        ok = a is not None and b is not None and "error" not in a and "error" not in b
        ratio = "%.2f" % (b["ms"] / a["ingot_ms"]) if ok and a.get("ingot_ms") and b.get("ms") else "n/a"
        if ratio == "n/a":
            missing.append(name)
        lines.append("| %s | %s | %s | %s |" % (name, cell(a, name.startswith("tiny_add")),
                                                cell(b, name.startswith("tiny_add")), ratio))
    return "\n".join(lines), missing


def e2e_table(workloads, ingot_runs, torch_runs, batch):
    """Training, inference and batch-1 latency per workload, medians over runs (min-max in
    parentheses); ratio = Ingot / PyTorch images/s, or Ingot ms / PyTorch ms for latency.
    Returns (text, missing)."""
    lines = ["| workload | part | batch | Ingot | PyTorch | Ingot / PyTorch |", "|---|---|---|---|---|---|"]
    missing = []
    for w in workloads:
        for part, label in E2E_PARTS:
            mi, vi = R.row_stats(ingot_runs, w, part)
            mt, vt = R.row_stats(torch_runs, w, part)
            ratio = "n/a" if mi is None or mt is None else "%.2f" % (mi / mt)
            if ratio == "n/a":
                missing.append("%s %s" % (w, part))
            lines.append("| %s | %s | %s | %s%s | %s%s | %s |" % (
                w, label, 1 if part == "latency" else batch, R.fmt_value(mi, part), R.spread(vi, part),
                R.fmt_value(mt, part), R.spread(vt, part), ratio))
    return "\n".join(lines), missing


def e2e_details(workloads, ingot_runs, torch_runs):
    """Where each side's work ran and its peak memory (medians over runs)."""
    lines = ["| workload | params | Ingot device | Ingot ops by backend | Ingot peak allocated MiB | "
             "PyTorch peak allocated MiB |", "|---|---|---|---|---|---|"]
    for w in workloads:
        ri = [r for r in ingot_runs.get(w, []) if r]
        rt = [r for r in torch_runs.get(w, []) if r]
        first = ri[0] if ri else {}
        ops = ", ".join("%s %s" % (k, "{:,}".format(v)) for k, v in sorted((first.get("ops_by_backend") or {}).items()))
        pi, pt = R.median_at(ri, ["memory", "peak_allocated_bytes"]), R.median_at(rt, ["memory", "peak_allocated_bytes"])
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            w, "{:,}".format(first["params"]) if "params" in first else "n/a", first.get("device", "n/a"), ops or "n/a",
            fmt(pi / 2**20 if pi is not None else None, 0), fmt(pt / 2**20 if pt is not None else None, 0)))
    return "\n".join(lines)
