#!/usr/bin/python3
"""train.compile side by side: `ingot bench` eager, `--compile` and `--compile` with Winograd
convolutions (train.compile.winograd; conv workloads only) against PyTorch 2.x eager and
torch.compile (bench/torch_bench.py [--compile], its compilation in the warm-up), on the MLP, the CNN
and ResNet-8 of bench/configs at batch 128 with 2 threads each; runs alternate, medians of --runs.

    /usr/bin/python3 bench/compare_compile.py [--runs N] [--quick] [--torch-python PATH] [--ingot PATH]
                                              [--workloads mlp,cnn,resnet8] [--no-write] [--out DIR]

PyTorch 2.x comes from the bench venv (build/torch-venv, made by `bench/compare --install-torch`
or by hand: python3 -m venv build/torch-venv && build/torch-venv/bin/pip install torch pyyaml numpy
safetensors). Writes the table into bench/RESULTS.md between the `compare-compile` markers and
every run's JSON under --out (default build/bench-compare/compile/).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = {"mlp": dict(warmup=5, steps=40, repeat=3, latency_iters=300),
         "cnn": dict(warmup=4, steps=10, repeat=3, latency_iters=200),
         "resnet8": dict(warmup=4, steps=8, repeat=3, latency_iters=100)}
QUICK = dict(warmup=3, steps=2, repeat=1, latency_iters=5)
SIDES = ("ingot eager", "ingot compile", "ingot winograd", "torch eager", "torch compile")


def sides_of(w):
    """The MLP has no convolution: its Winograd side would be its compile side."""
    return [s for s in SIDES if not (w == "mlp" and s == "ingot winograd")]


def run(cmd, out_file):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit("compare_compile: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    with open(out_file, "w") as f:
        f.write(line + "\n")
    return json.loads(line)


def side_cmd(side, w, params, ingot, torch_python):
    config = os.path.join(ROOT, "bench", "configs", w + ".yaml")
    common = ["--json", "--warmup", str(params["warmup"]), "--steps", str(params["steps"]), "--repeat",
              str(params["repeat"]), "--latency-iters", str(params["latency_iters"]), "--batch-size", "128",
              "--infer-batch", "256", "--threads", "2"]
    if side == "ingot winograd":
        return [ingot, "bench", config] + common + ["--compile", "--set", "train.compile={winograd: true}"]
    if side.startswith("ingot"):
        return [ingot, "bench", config] + common + (["--compile"] if side.endswith("compile") else [])
    return [torch_python, os.path.join(ROOT, "bench", "torch_bench.py"), config] + common + (
        ["--compile"] if side.endswith("compile") else [])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--torch-python", default=os.path.join(ROOT, "build", "torch-venv", "bin", "python"))
    ap.add_argument("--ingot", default=os.path.join(ROOT, "build", "apps", "ingot", "ingot"))
    ap.add_argument("--workloads", default="mlp,cnn,resnet8")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-compare", "compile"))
    args = ap.parse_args(argv)
    if not os.path.exists(args.torch_python):
        sys.exit("compare_compile: no PyTorch 2.x at %s (see --help)" % args.torch_python)
    os.makedirs(args.out, exist_ok=True)
    args.load = os.getloadavg()[0]
    print("compare_compile: load average %.2f before the runs" % args.load, flush=True)
    results = {}
    for w in args.workloads.split(","):
        params = QUICK if args.quick else STEPS[w]
        for r in range(args.runs):
            for side in sides_of(w):
                name = "%s-%s-%d.json" % (w, side.replace(" ", "-"), r)
                res = run(side_cmd(side, w, params, args.ingot, args.torch_python), os.path.join(args.out, name))
                results.setdefault((w, side), []).append(res)
                print("compare_compile: %s %s run %d: train %.0f images/s, latency %.3f ms" % (
                    w, side, r + 1, res["train"]["images_per_s"]["median"], res["latency_b1_ms"]["median"]), flush=True)
    # memory with train.compile.recompute on the conv workloads: the plan, not a timing, so one short run
    args.recompute = {}
    for w in args.workloads.split(","):
        if w == "mlp":
            continue
        cmd = side_cmd("ingot compile", w, QUICK, args.ingot, args.torch_python) + [
            "--set", "train.compile={recompute: true}"]
        args.recompute[w] = run(cmd, os.path.join(args.out, "%s-recompute.json" % w))["compile"]["planned_bytes"]
    table = report(results, args)
    print(table)
    if not args.no_write:
        write_results(table)


def med(results, w, side, *path):
    vals = []
    for res in results[(w, side)]:
        v = res
        for p in path:
            v = v[p]
        vals.append(v)
    return statistics.median(vals)


def paired(results, w, a, b, path, best_of=None):
    """Median over the runs of a's value over b's (or over the better of best_of's) in the same run:
    the four sides of a run ran back to back, so the machine's drift cancels out of the ratio."""
    def val(side, i):
        v = results[(w, side)][i]
        for p in path:
            v = v[p]
        return v
    ratios = []
    for i in range(len(results[(w, a)])):
        if best_of:
            vals = [val(s, i) for s in best_of]
            ref = min(vals) if path[0] == "latency_b1_ms" else max(vals)
        else:
            ref = val(b, i)
        ratios.append(val(a, i) / ref)
    return statistics.median(ratios)


def report(results, args):
    ws = sorted({w for w, _ in results}, key=["mlp", "cnn", "resnet8"].index)
    torch_sides = ("torch eager", "torch compile")
    lines = ["Command: `/usr/bin/python3 bench/compare_compile.py --runs %d%s` (load average %.2f at the start; "
             "2 threads per side, batch 128). Values: medians over the runs of each run's median; ratios: medians "
             "of the ratios within each run (its four sides ran back to back), which the machine's drift "
             "disturbs less. Winograd: `--compile` with `train.compile.winograd: true` (3x3 convolutions "
             "on Winograd kernels where measured faster; not eager's bits)." % (
                 args.runs, " --quick" if args.quick else "", args.load), "",
             "| workload | Ingot eager | Ingot compile | + Winograd | PyTorch eager | torch.compile | "
             "compile / Ingot eager | compile / best PyTorch | + Winograd / Ingot eager | + Winograd / best "
             "PyTorch | target |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = (("train images/s", ("train", "images_per_s", "median"), "%.0f"),
            ("batch-1 latency ms", ("latency_b1_ms", "median"), "%.3f"),
            ("inference images/s (b 256)", ("inference", "images_per_s", "median"), "%.0f"))
    targets = {("mlp", "train images/s"): ">= 2.5", ("cnn", "train images/s"): ">= 2",
               ("resnet8", "train images/s"): ">= 2 (and >= 1.2 own eager)",
               ("mlp", "batch-1 latency ms"): "<= 0.5", ("cnn", "batch-1 latency ms"): "<= 0.5"}
    for label, path, fmt in rows:
        for w in ws:
            v = {s: med(results, w, s, *path) for s in sides_of(w)}
            wino = "ingot winograd" in v
            lines.append(("| %s %s | " + fmt + " | " + fmt + " | %s | " + fmt + " | " + fmt +
                          " | %.2f | %.2f | %s | %s | %s |") % (
                w, label, v["ingot eager"], v["ingot compile"], fmt % v["ingot winograd"] if wino else "",
                v["torch eager"], v["torch compile"],
                paired(results, w, "ingot compile", "ingot eager", path),
                paired(results, w, "ingot compile", None, path, torch_sides),
                "%.2f" % paired(results, w, "ingot winograd", "ingot eager", path) if wino else "",
                "%.2f" % paired(results, w, "ingot winograd", None, path, torch_sides) if wino else "",
                targets.get((w, label), "—")))
    for w in ws:
        eager_peak = med(results, w, "ingot eager", "memory", "step_peak_bytes")
        planned = med(results, w, "ingot compile", "compile", "planned_bytes")
        lines.append("| %s step memory MiB (eager: peak above the step's start; compile: planned arena) | %.1f | %.1f "
                     "| | | | %.2f | | | | <= 0.8 |" % (w, eager_peak / 2**20, planned / 2**20, planned / eager_peak))
        if w in getattr(args, "recompute", {}):
            r = args.recompute[w]
            lines.append("| %s step memory MiB, `train.compile.recompute: true` | %.1f | %.1f | | | | %.2f | | | | "
                         "<= 0.8 |" % (w, eager_peak / 2**20, r / 2**20, r / eager_peak))
    return "\n".join(lines) + "\n"


def write_results(table):
    path = os.path.join(ROOT, "bench", "RESULTS.md")
    text = open(path).read()
    begin, end = "<!-- compare-compile:begin -->", "<!-- compare-compile:end -->"
    block = begin + "\n" + table + end
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text += "\n## Compile: a captured step against eager and torch.compile\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
