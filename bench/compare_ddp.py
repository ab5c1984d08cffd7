"""Data parallel on this machine (`bench/compare --distributed`): the Fashion-MNIST CNN of
configs/fashion_mnist_cnn.yaml at a global batch of 128, trained by
  1 process x 1 thread, 1 process x 2 threads, and 2 processes x 1 thread (DDP, 64 per rank),
by Ingot (`ingot run` / `ingot launch`, real data, one loader worker per process) and by PyTorch 2.x
(bench/torch_ddp.py: DistributedDataParallel over gloo, in-memory random batches), in alternation;
medians of --runs runs of each, each run's value the median step time after a warm-up.

Then the overlap: one 2-rank Ingot run with --profile (bucket_mb 0.5, so the large Linear's
gradient is a bucket of its own): the share of the all-reduce time that ran while the main thread
was still in backward, read from rank 0's Chrome trace.
The tables go into bench/RESULTS.md between the `compare-distributed` markers.
"""
import json
import os
import statistics
import subprocess
import tempfile
import time

import compare_amp
import compare_env as E
import compare_report as R

BEGIN, END = "<!-- compare-distributed:begin -->", "<!-- compare-distributed:end -->"
CONFIG = os.path.join(E.ROOT, "configs", "fashion_mnist_cnn.yaml")
STEPS = 200
SETUPS = [(1, 1), (1, 2), (2, 1)]  # (processes, threads each)


def ingot_run(ingot, world, threads, runs, name, log, extra=()):
    sets = ["name=%s" % name, "threads=%d" % threads, "train.steps=%d" % STEPS, "train.log_every=1",
            "data.workers=1", "stages=[train]", "data.batch_size=%d" % (128 // world)]
    if world > 1:
        sets += ["parallel.mode=ddp"]
    args = []
    for s in list(sets) + list(extra):
        args += ["--set", s]
    cmd = [ingot, "run", CONFIG, "--runs-dir", runs, "--force"] + args
    if world > 1:
        cmd = [ingot, "launch", "--nproc-per-node", str(world), "--threads-per-rank", str(threads), "run", CONFIG,
               "--runs-dir", runs, "--force"] + args
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    steps = [json.loads(l) for l in open(os.path.join(runs, name, "metrics.jsonl"))]
    times = [s["time_s"] for s in steps if s.get("event") == "train_step"]
    step = statistics.median(times[STEPS // 5:])
    log("  ingot %dx%d: %.1f ms/step (%.0f s)" % (world, threads, 1000 * step, time.time() - t0))
    return 128 / step


def torch_run(python, world, threads, log):
    r = subprocess.run([python, os.path.join(E.ROOT, "bench", "torch_ddp.py"), CONFIG, "--world", str(world),
                        "--threads", str(threads), "--steps", str(STEPS), "--global-batch", "128"],
                       capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    if r.returncode != 0:
        raise RuntimeError("torch_ddp.py failed (%d):\n%s" % (r.returncode, r.stderr[-2000:]))
    out = json.loads(r.stdout.strip().splitlines()[-1])
    log("  torch %dx%d: %.1f ms/step" % (world, threads, 1000 * out["step_s"]))
    return out["images_per_s"], out["torch"]


def overlap(ingot, runs, log):
    """Share of rank 0's all-reduce time spent while its main thread was in backward."""
    name = "ddp_profile"
    prof = os.path.join(runs, "profile")
    cmd = [ingot, "launch", "--nproc-per-node", "2", "--threads-per-rank", "1", "run", CONFIG, "--runs-dir", runs,
           "--force", "--profile=" + prof]
    for s in ["name=" + name, "threads=1", "train.steps=150", "data.workers=1", "stages=[train]", "data.batch_size=64",
              "parallel.mode=ddp", "parallel.bucket_mb=0.5"]:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("profiled run failed:\n" + r.stderr[-2000:])
    events = json.load(open(os.path.join(prof, "trace.json")))["traceEvents"]
    backward = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["name"] == "backward" and e.get("cat") == "step"]
    main_tid = next(e["tid"] for e in events if e["name"] == "backward")
    reduce = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["name"] == "ddp: all_reduce" and e["tid"] != main_tid]
    waiting = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["name"] == "ddp: wait"]

    def shared(spans, others):
        return sum(max(0.0, min(b, d) - max(a, c)) for a, b in spans for c, d in others)

    # The "backward" phase also holds the wait for the last buckets (after backward proper): the
    # overlap is the all-reduce time inside backward minus that inside the waits.
    total = sum(b - a for a, b in reduce)
    inside = shared(reduce, backward) - shared(reduce, waiting)
    waits = [b - a for a, b in waiting]
    bw = [d - c for c, d in backward]
    return {"reductions": len(reduce), "all_reduce_ms": total / 1000 / max(1, len(backward)),
            "overlapped": inside / total if total else 0.0,
            "backward_ms": (statistics.median(bw) - (statistics.median(waits) if waits else 0.0)) / 1000,
            "wait_ms": statistics.median(waits) / 1000 if waits else 0.0, "trace": os.path.join(prof, "trace.json")}


def run(args, log):
    ingot = E.which_ingot(args.ingot)
    python, version, note = compare_amp.find_torch_python(args.torch_python, args.install_torch, log)
    load = E.loadavg()
    t0 = time.time()
    out = args.out or os.path.join(E.ROOT, "build", "bench-compare")
    os.makedirs(out, exist_ok=True)
    runs = tempfile.mkdtemp(prefix="ddp-", dir=out)
    ingot_ips = {s: [] for s in SETUPS}
    torch_ips = {s: [] for s in SETUPS}
    for i in range(args.runs):
        log("run %d of %d" % (i + 1, args.runs))
        for s in SETUPS:
            ingot_ips[s].append(ingot_run(ingot, s[0], s[1], runs, "ddp_%dx%d" % s, log))
            ips, version = torch_run(python, s[0], s[1], log)
            torch_ips[s].append(ips)
    ov = overlap(ingot, runs, log)
    med = {s: statistics.median(v) for s, v in ingot_ips.items()}
    tmed = {s: statistics.median(v) for s, v in torch_ips.items()}
    lines = [
        "Command: `bench/compare --distributed%s` (%.0f minutes; load average %s at the start). Fashion-MNIST CNN "
        "(configs/fashion_mnist_cnn.yaml), global batch 128, AdamW; images/s of the whole group from the median step "
        "time after %d warm-up steps; median of %d runs. Ingot reads the real dataset (one loader worker per "
        "process); PyTorch %s trains on in-memory random batches (DistributedDataParallel over gloo)."
        % (" --runs %d" % args.runs if args.runs != 3 else "", (time.time() - t0) / 60, load, STEPS // 5, args.runs,
           version),
        "",
        "| processes x threads | Ingot images/s | vs 1x1 | PyTorch images/s | vs 1x1 | Ingot / PyTorch |",
        "|---|---|---|---|---|---|",
    ]
    for s in SETUPS:
        lines.append("| %d x %d | %.0f | %.2fx | %.0f | %.2fx | %.2fx |" % (
            s[0], s[1], med[s], med[s] / med[(1, 1)], tmed[s], tmed[s] / tmed[(1, 1)], med[s] / tmed[s]))
    lines += [
        "",
        "Overlap (Ingot, 2 x 1, bucket_mb 0.5, rank 0's trace of 150 steps): %d bucket all-reduces on the "
        "communication thread, %.2f ms of all-reduce per step (waiting for the other rank included), %.0f%% of "
        "it while backward was still computing (median backward %.1f ms; after it the step waited %.2f ms for "
        "the last buckets)."
        % (ov["reductions"], ov["all_reduce_ms"], 100 * ov["overlapped"], ov["backward_ms"], ov["wait_ms"]),
    ]
    if note:
        lines += ["", note]
    return "\n".join(lines)


def main(args, argv, log):
    text = run(args, log)
    print(text)
    if not args.no_write:
        R.replace_section(args.results or os.path.join(E.ROOT, "bench", "RESULTS.md"), text, BEGIN, END)
    return 0
