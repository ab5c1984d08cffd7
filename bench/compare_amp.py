"""bench/compare --levers: mixed precision and gradient checkpointing, Ingot against PyTorch 2.x on
this CPU. bf16: cnn and resnet8 trained in f32 and under bf16 autocast on both sides (Ingot's
train.amp.dtype=bf16, PyTorch's torch.autocast("cpu", dtype=torch.bfloat16)), alternating runs,
medians; where Ingot refuses bf16 (a CPU without bf16 kernels) the rows say so. Checkpointing:
bench/configs/resnet20.yaml plain, with train.checkpointing.segments N (Ingot: cut by measured
activation bytes; PyTorch: checkpoint_sequential with use_reentrant=False, cut by layer count) and
with train.checkpointing.blocks (one checkpoint per residual block on both sides): the step's peak,
activation bytes (what the graph keeps between forward and backward), step time, and Ingot's
largest batch within the memory plain training needs at the bench batch (`ingot bench --scaling`).
The same `--set` lines drive `ingot bench` and bench/torch_bench.py, from the same initial weights.

PyTorch 2.x comes from --torch-python, $INGOT_TORCH_PYTHON or the build's torch-venv
($INGOT_BUILD/torch-venv, made by --install-torch: a venv of PyPI's torch, several GB); without
one, Debian's /usr/bin/python3 (torch 1.13) stands in and the tables say so.
"""
import os
import subprocess
import sys
import time

import compare_amp_report as A
import compare_env as E
import compare_gpu as GPU
import compare_report as R

BATCH = 128
BF16 = {"cnn": dict(warmup=3, steps=10, repeat=3), "resnet8": dict(warmup=3, steps=10, repeat=3)}
CHECKPOINT = dict(warmup=2, steps=4, repeat=3)
QUICK = dict(warmup=1, steps=1, repeat=1)
SEGMENTS = (3, 5)  # of ResNet-20's 15 units (stem layers, 9 blocks, head layers): about sqrt(15), and more
CHECKPOINT_WORKLOAD = "resnet20"
TIMEOUT = 1800


def build_dir():
    return os.environ.get("INGOT_BUILD", os.path.join(E.ROOT, "build"))


def venv_python():
    return os.path.join(build_dir(), "torch-venv", "bin", "python")


def torch_version(python):
    """torch.__version__ of `python` (which must also import yaml), or None."""
    try:
        r = subprocess.run([python, "-c", "import torch, yaml; print(torch.__version__)"], capture_output=True,
                           text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def install_torch(log):
    """A venv with PyPI's torch (and PyYAML, NumPy) at $INGOT_BUILD/torch-venv; nothing to do when
    it already imports."""
    venv = os.path.dirname(os.path.dirname(venv_python()))
    if torch_version(venv_python()):
        return
    log("installing PyTorch from PyPI into %s (several GB)" % venv)
    subprocess.run([E.PYTHON, "-m", "venv", venv], check=True)
    subprocess.run([venv_python(), "-m", "pip", "install", "--quiet", "torch", "pyyaml", "numpy"], check=True)


def find_torch_python(explicit, install, log):
    """(python, torch version, note): the first of --torch-python, $INGOT_TORCH_PYTHON and the
    build's torch-venv with a torch 2.x; else Debian's torch 1.13, with a note saying so."""
    if explicit:
        v = torch_version(explicit)
        if v is None:
            raise GPU.Unavailable("--torch-python %s does not import torch and yaml" % explicit)
        return explicit, v, "" if not v.startswith("1.") else "(torch %s: not 2.x)" % v
    if install:
        install_torch(log)
    for py in (os.environ.get("INGOT_TORCH_PYTHON"), venv_python()):
        v = py and torch_version(py)
        if v and not v.startswith("1."):
            return py, v, ""
    v = torch_version(E.PYTHON)
    if v is None:
        raise GPU.Unavailable("no PyTorch: give --torch-python PATH or --install-torch")
    return E.PYTHON, v, ("**PyTorch %s (Debian's %s) stands in for PyTorch 2.x here: no torch 2.x was found "
                         "(--torch-python, $INGOT_TORCH_PYTHON, %s); `--install-torch` makes one.**"
                         % (v, E.PYTHON, venv_python()))


class Sides:
    """Runs `ingot bench` and bench/torch_bench.py with the same flags and --set lines."""

    def __init__(self, runner, ingot, python, threads, torch_env, batch):
        self.runner, self.ingot, self.python, self.threads = runner, ingot, python, threads
        self.torch_env, self.batch = torch_env, batch

    def config(self, w):
        return os.path.join(E.ROOT, "bench", "configs", w + ".yaml")

    def init(self, w):
        return os.path.join(self.runner.out, "init", w + ".safetensors")

    def flags(self, p, sets):
        f = ["--json", "--warmup", str(p["warmup"]), "--steps", str(p["steps"]), "--repeat", str(p["repeat"]),
             "--latency-iters", "1", "--batch-size", str(self.batch), "--infer-batch", str(2 * self.batch)]
        for s in sets:
            f += ["--set", s]
        return f

    def ingot_run(self, w, p, sets, name, extra=()):
        cmd = [self.ingot, "bench", self.config(w), "--threads", str(self.threads)] + self.flags(p, sets)
        if not os.path.exists(self.init(w)):
            cmd += ["--save-init", self.init(w)]
        rc, out, tail = self.runner.run(cmd + list(extra), E.ingot_environ(self.threads), name, TIMEOUT)
        if rc == 2 and A.REFUSED_BF16 in tail:  # this CPU has no bf16 kernels: said, not failed
            return {"refused": tail.split("error: ", 1)[-1]}
        return GPU.last_json(out) if rc == 0 else None

    def torch_run(self, w, p, sets, name):
        cmd = [self.python, os.path.join(E.ROOT, "bench", "torch_bench.py"), self.config(w), "--parts",
               "train,inference", "--threads", str(self.torch_env.threads)] + self.flags(p, sets)
        if os.path.exists(self.init(w)):
            cmd += ["--init", self.init(w)]
        rc, out, _ = self.runner.run(cmd, self.torch_env.environ(), name, TIMEOUT)
        return GPU.last_json(out) if rc == 0 else None


def bf16_runs(sides, runs, quick, log):
    """{(workload, side key): [record per run]}: per run and workload Ingot f32, Ingot bf16,
    PyTorch f32, PyTorch bf16, one after the other."""
    out = {}
    for i in range(runs):
        for w in A.BF16_WORKLOADS:
            p = QUICK if quick else BF16[w]
            for key, _ in A.SIDES:
                sets = ["train.amp.dtype=bf16"] if key.endswith("bf16") else []
                run = sides.ingot_run if key.startswith("ingot") else sides.torch_run
                out.setdefault((w, key), []).append(run(w, p, sets, "levers-run%d-%s-%s" % (i, w, key)))
        log("bf16 run %d/%d done (load %s)" % (i + 1, runs, E.loadavg()))
    return out


def checkpoint_sets(variant):
    """The --set lines of a checkpointing variant: 0 plain, N segments, "blocks"."""
    if variant == "blocks":
        return ["train.checkpointing.blocks=true"]
    return ["train.checkpointing.segments=%d" % variant] if variant else []


def checkpoint_runs(sides, runs, quick, segments, log):
    """{(side, variant): [record per run]}, variant 0 = plain, N segments or "blocks", alternating
    sides per variant; then, once, Ingot's largest batch per variant within the memory the plain
    runs needed ({("scaling", variant): record})."""
    out = {}
    p = QUICK if quick else CHECKPOINT
    variants = [0] + list(segments) + ["blocks"]
    for i in range(runs):
        for v in variants:
            for side, run in (("ingot", sides.ingot_run), ("torch", sides.torch_run)):
                out.setdefault((side, v), []).append(run(CHECKPOINT_WORKLOAD, p, checkpoint_sets(v), "levers-run%d-%s-%s-%s"
                                                         % (i, CHECKPOINT_WORKLOAD, side, A.variant_tag(v))))
        log("checkpointing run %d/%d done (load %s)" % (i + 1, runs, E.loadavg()))
    limit = A.median(out.get(("ingot", 0), []), "memory", "peak_allocated_bytes")
    if limit:
        for v in variants:
            out[("scaling", v)] = [sides.ingot_run(CHECKPOINT_WORKLOAD, QUICK, checkpoint_sets(v),
                                                   "levers-scaling-%s" % A.variant_tag(v),
                                                   ["--scaling", str(int(limit))])]
        log("checkpointing: largest batches within %.1f MiB found (load %s)" % (limit / 2**20, E.loadavg()))
    return out


def rerun_command(args):
    """The full measurement: default runs, the build's torch-venv (made if missing)."""
    return ("`bench/compare --levers --install-torch` (3 alternating runs per side; `--install-torch` makes or reuses "
            "`$INGOT_BUILD/torch-venv`, default `build/torch-venv`; `--torch-python PATH` names another PyTorch 2.x, "
            "e.g. `%s` here; `--ingot PATH` another build's binary)" % args.torch_python_used)


def report(args, argv, facts, torch_text, note, bf16, ckpt, segments, minutes):
    uptime = E.command_output(["uptime"]).strip()
    quick = " (`--quick`: one step per run, a smoke test: these figures say nothing about speed)" if args.quick else ""
    text = [
        "# Mixed precision and gradient checkpointing (`bench/compare --levers`)", "",
        "%s; %s (%s), %d cores, Linux %s; load average %s before, %s after; `uptime` at the end: `%s`; %.1f minutes%s."
        % (facts["date"], facts["cpu"], facts["isa"], facts["cores"], facts["kernel"], facts["load_start"],
           facts["load_end"], uptime, minutes, quick), "",
        "Command: `%s`" % " ".join(["bench/compare"] + argv), "",
        "To measure again on an idle machine: %s." % rerun_command(args), "",
        "Versions: %s; PyTorch %s (`%s`, `torch.set_num_threads(%d)`); Ingot `--threads %d`. Train batch %d, "
        "inference batch %d, AdamW, random in-memory data, the same initial weights on both sides (`ingot bench "
        "--save-init`, loaded with strict=True); %d run%s per side." % (
            facts["ingot"] or "ingot ?", torch_text, args.torch_python_used, args.torch_threads, args.ingot_threads,
            args.levers_batch, 2 * args.levers_batch, args.runs, "s" if args.runs > 1 else ""), "",
        "Environments: Ingot %s; PyTorch %s." % (env_text(E.recorded_environ(E.ingot_environ(args.ingot_threads))),
                                                 env_text(args.torch_variables)), ""]
    if note:
        text += [note, ""]
    text.append(busy_note(facts))
    misses, complete = [], True
    if bf16 is not None:
        table, m, c = A.bf16_table(bf16)
        misses, complete = misses + m, complete and c
        problems = A.dtype_problems(bf16)
        text += ["## bf16 autocast", "",
                 "Training: forward and loss under autocast (Ingot `--set train.amp.dtype=bf16`: matmul, linear and "
                 "conv in bf16 through its backends; PyTorch `torch.autocast(\"cpu\", dtype=torch.bfloat16)`), "
                 "backward outside it, f32 master weights; inference under the same autocast. Images/s: median "
                 "over runs (min-max of the runs' medians).", "", table, "",
                 A.bf16_detail(bf16), ""]
        if problems:
            text += ["**The dtype a side reported is not the column's: %s.**" % "; ".join(problems), ""]
        text += ["Not measured here: the issue's accuracy target (Fashion-MNIST test accuracy within 0.3 points of "
                 "f32) needs full training runs (`ingot run` with and without `train.amp`).", ""]
    if ckpt is not None:
        table, m, c = A.checkpoint_table(ckpt, segments)
        misses, complete = misses + m, complete and c
        text += ["## Gradient checkpointing", "",
                 "`bench/configs/%s.yaml` (the `resnet` preset, depth 20: a stem, 9 residual blocks in three "
                 "stages, a head). `--set train.checkpointing.segments=N`: Ingot cuts at most N segments "
                 "between its 15 units (layers and blocks, the stages unrolled) by activation bytes measured "
                 "before training; PyTorch's `checkpoint_sequential(model, N, x, use_reentrant=False)` cuts the "
                 "9 top-level layers by count, so one segment holds most of the activations. `--set "
                 "train.checkpointing.blocks=true`: every residual block checkpointed on both sides (PyTorch: "
                 "`checkpoint(block, x, use_reentrant=False)`). Step peak: the most allocated above the step's "
                 "start during forward and backward (Ingot's allocator statistics; PyTorch's profiler allocation "
                 "records). Activation: bytes the graph keeps from the end of forward (loss computed) to the "
                 "start of backward, in one untimed step (Ingot's allocator; PyTorch's storages saved for "
                 "backward that did not exist before the step, `saved_tensors_hooks`). Largest batch: `ingot "
                 "bench --scaling` within the memory Ingot's plain training allocated at its peak at this batch "
                 "(weights, gradients, optimizer state, data and activations), one step per batch tried. Peak, "
                 "slow-down and batch are against plain training on the same side; the verdict uses the step "
                 "peak, the median slow-down and the largest batch." %
                 CHECKPOINT_WORKLOAD, "", table, ""]
    text.append("Targets missed: %s." % (", ".join(misses) if misses else "none"))
    return "\n".join(text), complete


def env_text(env):
    return ", ".join("`%s=%s`" % kv for kv in sorted(env.items())) or "(nothing set)"


def busy_note(facts):
    load = float(facts["load_start"])
    if load < 0.5 * facts["cores"]:
        return ""
    return ("**The machine was busy (load average %.1f on %d cores before the runs): other processes took CPU time "
            "from both sides, so these times and ratios say little. Run the command above again on an idle "
            "machine.**\n" % (load, facts["cores"]))


def main(args, argv, log):
    """bench/compare's entry for --levers; returns the exit code."""
    t0 = time.time()
    try:
        python, version, note = find_torch_python(args.torch_python, args.install_torch, log)
        segments = [int(s) for s in args.segments.split(",") if s]
    except GPU.Unavailable as e:
        log("error: %s" % e)
        return 3
    except (ValueError, subprocess.CalledProcessError) as e:
        log("error: %s" % e)
        return 2
    ingot = E.which_ingot(args.ingot)
    if not E.has_bench(ingot):
        log("error: no Ingot with a 'bench' command (%s); build it or give --ingot PATH" % ingot)
        return 2
    torch_env = E.TorchEnv.parse(args.torch_env)
    if not any(a.startswith("--torch-env") for a in argv):  # by default as many threads as Ingot's
        torch_env.threads = args.ingot_threads
    args.torch_python_used, args.torch_threads = python, torch_env.threads
    args.torch_variables = dict(torch_env.variables(), **E.BOTH)
    facts = E.machine_facts(ingot)
    facts["load_start"] = E.loadavg()
    out = os.path.abspath(os.path.join(args.out, "levers"))
    sides = Sides(GPU.Runner(out, log), ingot, python, args.ingot_threads, torch_env, args.levers_batch)
    log("PyTorch %s (%s); Ingot %s; raw output in %s" % (version, python, ingot, out))
    parts = args.levers_parts.split(",")
    bf16 = bf16_runs(sides, args.runs, args.quick, log) if "bf16" in parts else None
    ckpt = checkpoint_runs(sides, args.runs, args.quick, segments, log) if "checkpointing" in parts else None
    facts["load_end"] = E.loadavg()
    text, complete = report(args, argv, facts, version, note, bf16, ckpt, segments, (time.time() - t0) / 60)
    print(text)
    if not args.no_write:
        R.replace_section(args.results, text, A.BEGIN, A.END)
    log("done in %.1f minutes" % ((time.time() - t0) / 60))
    if not complete:
        log("error: the tables are incomplete (a side failed; see %s/raw/*.log)" % out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit("run it as bench/compare --levers")
