"""bench/compare --vision: ImageNet-size vision work, Ingot against PyTorch 2.x + torchvision on
this CPU, in three parts (--vision-parts, default all):

  loader     the input pipeline alone: `ingot bench --data bench/configs/loader_imagenet.yaml`
             (RandomResizedCrop 224 + flip + normalize, batch 32, 2 workers) against
             bench/torch_loader.py (torchvision's ImageFolder + DataLoader, the same transforms),
             on an ImageNet-layout folder of ImageNet-size JPEGs (500 x 375 +- 40, 4 classes, 96
             training images a class) and on one 10x as large (960 a class): images/s (target
             >= 1.5x torchvision) and resident memory (target: flat as the folder grows 10x)
  resnet50   bench/configs/resnet50.yaml trained at 224, batch 16: Ingot f32 and bf16 autocast
             (`--set train.amp.dtype=bf16`) against PyTorch eager and torch.compile, each in f32
             and under bf16 autocast (bench/torch_bench.py [--compile] [--amp bf16], torch.compile
             timed after its warm-up); target >= 1.3x the better of eager and compile per dtype
  mobilenet  bench/configs/mobilenet_v2.yaml, batch-1 latency at 224 in eval mode: Ingot against
             PyTorch eager and torch.compile; target <= 0.5x the better of the two

The JPEG folders are written once by the build's make_jpegs (tests/pipeline/make_jpegs.cpp) under
--out (default build/bench-compare/vision/) and reused while their file counts match. Runs
alternate the sides, --runs times (default 3); every value is the median over runs of each run's
median, the ratios are of those medians (each run's own ratio in brackets). Both sides' models
start from the same weights (`ingot bench --save-init`, loaded by torch with strict=True). The
machine, the date, the versions and the exact commands go with the tables, which go into
bench/RESULTS.md between the `compare-vision` markers (never from --quick, a smoke test of a
step or two per side, ResNet-50 at batch 2); every run's raw output is under --out/raw, and
every record, with each command's wall time and peak RSS, in --out/vision.json.

PyTorch 2.x comes from --torch-python, $INGOT_TORCH_PYTHON or the build's torch-venv
($INGOT_BUILD/torch-venv; --install-torch makes it, with torchvision and Pillow), as for --levers.
"""
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

import compare_amp
import compare_amp_report as A
import compare_env as E
import compare_gpu as GPU
import compare_report as R

BEGIN, END = "<!-- compare-vision:begin -->", "<!-- compare-vision:end -->"
PARTS = ("loader", "resnet50", "mobilenet")
# make_jpegs' folders: (label, training images per class); 4 classes, 4 validation images each.
JPEGS = dict(classes=4, val=4, width=500, height=375, jitter=40)
FOLDERS = (("1x", "jpegs", 96), ("10x", "jpegs10", 960))
# Loader: 10 timed batches of 32 after one untimed, so that one epoch of the 1x folder (12 batches)
# holds them all and neither side restarts its workers inside the clock.
LOADER = dict(workers=2, batches=10, repeat=3)
LOADER_QUICK = dict(workers=2, batches=2, repeat=1)
# ResNet-50: a step takes seconds on 2 cores; torch.compile's warm-up (at least 3 steps and the
# compilation) takes minutes.
# Ingot's bench also infers and times batch-1 forwards; at infer batch 1 that costs little.
RESNET50 = dict(warmup=1, steps=3, repeat=2, batch=16, infer=1)
RESNET50_QUICK = dict(warmup=1, steps=1, repeat=1, batch=2, infer=1)
# MobileNetV2: Ingot's bench also trains and infers a little (batch 2) before its latency loop.
MOBILENET = dict(warmup=1, steps=1, repeat=3, latency_iters=40, batch=2)
MOBILENET_QUICK = dict(warmup=1, steps=1, repeat=1, latency_iters=5, batch=2)
TARGET_LOADER, TARGET_FLAT, TARGET_RESNET, TARGET_LATENCY = 1.5, 1.10, 1.3, 0.5
# (key, side, dtype) of the ResNet-50 part, in the order each run runs them.
RESNET_SIDES = (("ingot-f32", "ingot", "f32"), ("torch-eager-f32", "eager", "f32"),
                ("torch-compile-f32", "compile", "f32"), ("ingot-bf16", "ingot", "bf16"),
                ("torch-eager-bf16", "eager", "bf16"), ("torch-compile-bf16", "compile", "bf16"))
MOBILENET_SIDES = (("ingot", "ingot"), ("torch-eager", "eager"), ("torch-compile", "compile"))
TIMEOUT = 3600


class Runner:
    """Runs one benchmark process in its own process group, its stdout in out/raw/NAME.json and its
    command and stderr in out/raw/NAME.log; keeps the process's own peak RSS (wait4's ru_maxrss)."""

    def __init__(self, out, log):
        self.out, self.log = out, log
        self.commands = {}  # key -> the first command run under it
        self.failed = []  # names of the runs that gave no record
        os.makedirs(os.path.join(out, "raw"), exist_ok=True)
        os.makedirs(os.path.join(out, "init"), exist_ok=True)

    def run(self, cmd, env, name, key, timeout=TIMEOUT):
        """(record or None, stderr's last line): the last JSON line of stdout, with _seconds and
        _maxrss_mib added."""
        self.commands.setdefault(key, cmd)
        out_path, log_path = (os.path.join(self.out, "raw", name + ext) for ext in (".json", ".log"))
        fired = []
        t0 = time.time()
        with open(out_path, "w") as fo, open(log_path, "w") as fe:
            fe.write("$ %s\n" % shlex.join(cmd))
            fe.flush()
            p = subprocess.Popen(cmd, env=env, cwd=E.ROOT, stdout=fo, stderr=fe, start_new_session=True)

            def kill():
                fired.append(True)
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass

            timer = threading.Timer(timeout, kill)
            timer.start()
            try:
                _, status, usage = os.wait4(p.pid, 0)
            except BaseException:  # SIGTERM / ^C: the benchmark (and its workers) go too
                kill()
                p.wait()
                raise
            finally:
                timer.cancel()
            p.returncode = rc = os.waitstatus_to_exitcode(status)
        seconds = time.time() - t0
        with open(log_path) as f:
            tail = ([ln for ln in f.read().strip().splitlines()[1:]] or ["(no output)"])[-1]
        if fired:
            tail = "timed out after %d s" % timeout
        with open(out_path) as f:
            record = GPU.last_json(f.read()) if rc == 0 else None
        if rc != 0 or record is None:
            self.failed.append(name)
            self.log("%s failed (exit %d): %s [see %s]" % (name, rc, tail, log_path))
            return None, tail
        record["_seconds"], record["_maxrss_mib"] = seconds, usage.ru_maxrss / 1024.0
        self.log("  %s: %.0f s" % (name, seconds))
        return record, tail


def build_dir():
    return compare_amp.build_dir()


def make_jpegs_binary():
    return os.path.join(build_dir(), "tests", "pipeline", "make_jpegs")


def count_jpegs(folder):
    """{split: count of .jpg files below it}."""
    out = {}
    for split in ("train", "val"):
        n = 0
        for _, _, files in os.walk(os.path.join(folder, split)):
            n += sum(1 for f in files if f.endswith(".jpg"))
        out[split] = n
    return out


def jpeg_command(folder, per_class):
    return [make_jpegs_binary(), folder, "--classes", str(JPEGS["classes"]), "--train", str(per_class), "--val",
            str(JPEGS["val"]), "--width", str(JPEGS["width"]), "--height", str(JPEGS["height"]), "--jitter",
            str(JPEGS["jitter"])]


def ensure_jpegs(out, build, log):
    """{label: (folder, command)} for the 1x and 10x folders, written by make_jpegs where missing
    or incomplete (make_jpegs writes the same bytes for the same arguments, so a folder with the
    right file counts is reused)."""
    binary = make_jpegs_binary()
    folders = {}
    for label, name, per_class in FOLDERS:
        folder = os.path.join(out, name)
        cmd = jpeg_command(folder, per_class)
        want = {"train": JPEGS["classes"] * per_class, "val": JPEGS["classes"] * JPEGS["val"]}
        if count_jpegs(folder) != want:
            if not os.access(binary, os.X_OK):
                if not build:
                    raise RuntimeError("%s is missing (ninja -C %s make_jpegs builds it)" % (binary, build_dir()))
                log("building make_jpegs")
                subprocess.run(["ninja", "-C", build_dir(), "make_jpegs"], check=True, stdout=subprocess.DEVNULL)
            log("writing %d JPEGs into %s" % (want["train"] + want["val"], folder))
            if os.path.isdir(folder):
                shutil.rmtree(folder)
            subprocess.run(cmd, check=True)
            if count_jpegs(folder) != want:
                raise RuntimeError("%s: make_jpegs wrote %s images, expected %s" % (folder, count_jpegs(folder), want))
        folders[label] = (folder, cmd)
    return folders


def torch_versions(python):
    """{"torch", "torchvision", "pillow"} of `python`; the values missing where it lacks one."""
    code = ("import json, torch\nv = {'torch': torch.__version__}\ntry:\n import torchvision, PIL\n"
            " v.update(torchvision=torchvision.__version__, pillow=PIL.__version__)\nexcept ImportError:\n pass\n"
            "print(json.dumps(v))")
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
        return json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return {}


def install_torchvision(python, log):
    """torchvision and Pillow into the build's venv (PyPI), where --install-torch made it."""
    if python != compare_amp.venv_python() or "torchvision" in torch_versions(python):
        return
    log("installing torchvision and Pillow from PyPI into %s" % os.path.dirname(os.path.dirname(python)))
    subprocess.run([python, "-m", "pip", "install", "--quiet", "torchvision", "pillow"], check=True)


class Sides:
    """The command lines of each side, the same flags on both where they share them."""

    def __init__(self, runner, ingot, python, threads, torch_env, quick):
        self.runner, self.ingot, self.python, self.threads = runner, ingot, python, threads
        self.torch_env, self.quick = torch_env, quick

    def config(self, name):
        return os.path.join(E.ROOT, "bench", "configs", name + ".yaml")

    def init(self, model):
        return os.path.join(self.runner.out, "init", model + ".safetensors")

    def ingot_env(self):
        return E.ingot_environ(self.threads)

    def loader(self, side, folder, p, name, key):
        if side == "ingot":
            cmd = [self.ingot, "bench", "--data", self.config("loader_imagenet"),
                   "--set", "data.image_folder.train=" + os.path.join(folder, "train"),
                   "--set", "data.image_folder.test=" + os.path.join(folder, "val"),
                   "--workers", str(p["workers"]), "--steps", str(p["batches"]), "--repeat", str(p["repeat"]), "--json"]
            return self.runner.run(cmd, self.ingot_env(), name, key)[0]
        cmd = [self.python, os.path.join(E.ROOT, "bench", "torch_loader.py"), os.path.join(folder, "train"),
               str(p["workers"]), str(p["batches"]), str(p["repeat"])]
        return self.runner.run(cmd, self.torch_env.environ(), name, key)[0]

    def model(self, model, side, dtype, p, parts, name, key):
        """One `ingot bench` or torch_bench.py run of bench/configs/MODEL.yaml; Ingot's first run of
        a model writes the initial weights the torch runs load."""
        flags = ["--json", "--warmup", str(p["warmup"]), "--steps", str(p["steps"]), "--repeat", str(p["repeat"]),
                 "--threads", str(self.threads if side == "ingot" else self.torch_env.threads)]
        if side == "ingot":
            cmd = [self.ingot, "bench", self.config(model)] + flags + [
                "--batch-size", str(p["batch"]), "--infer-batch", str(p.get("infer", p["batch"])),
                "--latency-iters", str(p.get("latency_iters", 1))]
            if dtype == "bf16":
                cmd += ["--set", "train.amp.dtype=bf16"]
            if not os.path.exists(self.init(model)):
                cmd += ["--save-init", self.init(model)]
            record, tail = self.runner.run(cmd, self.ingot_env(), name, key)
            if record is None and A.REFUSED_BF16 in tail:  # this CPU has no bf16 kernels: said, not failed
                self.runner.failed.remove(name)
                return {"refused": tail.split("error: ", 1)[-1]}
            return record
        cmd = [self.python, os.path.join(E.ROOT, "bench", "torch_bench.py"), self.config(model)] + flags + [
            "--parts", parts]
        if parts == "train":
            cmd += ["--batch-size", str(p["batch"])]
        else:
            cmd += ["--latency-iters", str(p["latency_iters"])]
        if dtype == "bf16":
            cmd += ["--amp", "bf16"]
        if side == "compile":
            cmd.append("--compile")
        if os.path.exists(self.init(model)):
            cmd += ["--init", self.init(model)]
        return self.runner.run(cmd, self.torch_env.environ(), name, key)[0]


def loader_runs(sides, folders, runs, quick, log):
    """{(folder label, side): [record per run]}: per run Ingot then torch on the 1x folder, then on
    the 10x one."""
    p = LOADER_QUICK if quick else LOADER
    out = {}
    for i in range(runs):
        for label, _, _ in FOLDERS:
            for side in ("ingot", "torch"):
                out.setdefault((label, side), []).append(sides.loader(
                    side, folders[label][0], p, "loader-run%d-%s-%s" % (i, label, side), ("loader", label, side)))
        log("loader run %d/%d done (load %s)" % (i + 1, runs, E.loadavg()))
    return out


def model_runs(sides, model, table, p, parts, runs, compile_sides, log):
    """{key: [record per run]} for the (key, side, dtype) rows of `table`, in their order per run."""
    if os.path.exists(sides.init(model)):
        os.remove(sides.init(model))  # this invocation's Ingot writes it afresh
    out = {}
    for i in range(runs):
        for row in table:
            key, side, dtype = row if len(row) == 3 else row + ("f32",)
            if side == "compile" and not compile_sides:
                continue
            out.setdefault(key, []).append(sides.model(model, side, dtype, p, parts, "%s-run%d-%s" % (model, i, key),
                                                       (model, key)))
        log("%s run %d/%d done (load %s)" % (model, i + 1, runs, E.loadavg()))
    return out


# ---- tables ----------------------------------------------------------------------------------------

def loader_rate(record, side):
    if not record or record.get("refused"):
        return None
    if side == "ingot":
        rows = record.get("rows") or [{}]
        return A.at(rows[0], "images_per_s")
    rates = record.get("images_per_s") or []
    return statistics.median(rates) if rates else None


def loader_memory(record, side):
    """(resident MiB, second figure MiB): Ingot (its JSON's rss_mib at the end, its peak RSS);
    torch (main process ru_maxrss, main + workers PSS)."""
    if not record:
        return None, None
    if side == "ingot":
        rows = record.get("rows") or [{}]
        return A.at(rows[0], "rss_mib"), A.at(record, "_maxrss_mib")
    return A.at(record, "rss_mib"), A.at(record, "tree_pss_mib")


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def cell(values, digits=0):
    """median (min-max) of the runs' values."""
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    text = A.fmt(statistics.median(values), digits)
    return text + (" (%s-%s)" % (A.fmt(min(values), digits), A.fmt(max(values), digits)) if len(values) > 1 else "")


def per_run_ratios(a, b, digits=2):
    """Each run's own ratio a / b, in brackets, where there is more than one run."""
    pairs = [x / y for x, y in zip(a, b) if x is not None and y]
    return " [%s]" % ", ".join("%.*f" % (digits, r) for r in pairs) if len(pairs) > 1 else ""


def verdict(value, target, lower_is_better=False):
    if value is None:
        return "missing"
    return "pass" if (value <= target if lower_is_better else value >= target) else "miss"


def loader_table(runs, folders):
    """(markdown, misses, complete)."""
    lines = ["| folder | Ingot images/s | torchvision images/s | Ingot / torchvision | target | Ingot RSS MiB at the "
             "end (peak) | torch main ru_maxrss MiB | torch main + workers PSS MiB |", "|---|---|---|---|---|---|---|---|"]
    misses, complete, mem = [], True, {}
    for label, _, per_class in FOLDERS:
        ri, rt = runs.get((label, "ingot"), []), runs.get((label, "torch"), [])
        vi, vt = [loader_rate(r, "ingot") for r in ri], [loader_rate(r, "torch") for r in rt]
        r = A.ratio(med(vi), med(vt))
        v = verdict(r, TARGET_LOADER)
        complete = complete and v != "missing"
        if v == "miss":
            misses.append("loader %s" % label)
        mi = [loader_memory(x, "ingot") for x in ri]
        mt = [loader_memory(x, "torch") for x in rt]
        mem[label] = (med([m[0] for m in mi]), med([m[1] for m in mi]), med([m[0] for m in mt]), med([m[1] for m in mt]))
        images = JPEGS["classes"] * per_class
        lines.append("| %s images (%s) | %s | %s | %s%s | >= %.1f: %s | %s (%s) | %s | %s |" % (
            "{:,}".format(images), label, cell(vi), cell(vt), "n/a" if r is None else "%.2f" % r,
            per_run_ratios(vi, vt), TARGET_LOADER, v, A.fmt(med([m[0] for m in mi]), 1),
            A.fmt(mem[label][1], 1), A.fmt(mem[label][2], 1), A.fmt(mem[label][3], 1)))
    grow = [A.ratio(mem["10x"][k], mem["1x"][k]) for k in range(4)]
    # Flat: neither Ingot figure (at the end, peak) grows by more than TARGET_FLAT.
    flat = verdict(None if None in grow[:2] else max(grow[:2]), TARGET_FLAT, lower_is_better=True)
    complete = complete and flat != "missing"
    if flat == "miss":
        misses.append("loader memory flat")
    f = lambda g: "n/a" if g is None else "%.2fx" % g  # noqa: E731
    lines.append("| 10x / 1x memory | | | | Ingot <= %.2fx: %s | %s | %s | %s |" % (
        TARGET_FLAT, flat, "%s (%s)" % (f(grow[0]), f(grow[1])), f(grow[2]), f(grow[3])))
    return "\n".join(lines), misses, complete


def train_rate(record):
    return A.at(record, "train", "images_per_s", "median") if record and not record.get("refused") else None


def resnet_table(runs, compile_sides):
    lines = ["| dtype | Ingot images/s | PyTorch eager | torch.compile | Ingot / best PyTorch | target | Ingot / eager | "
             "Ingot / compile | ms/step Ingot / eager / compile | peak RSS MiB Ingot / eager / compile |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    misses, complete, notes = [], True, []
    for dtype in ("f32", "bf16"):
        ri, re_, rc = (runs.get("%s-%s" % (s, dtype), []) for s in ("ingot", "torch-eager", "torch-compile"))
        refused = next((r["refused"] for r in ri if r and r.get("refused")), None)
        if refused:
            notes.append("Ingot refused bf16 on this CPU: %s" % refused)
        vi, ve, vc = ([train_rate(r) for r in rs] for rs in (ri, re_, rc))
        mi, me, mc = med(vi), med(ve), med(vc)
        best = max([v for v in (me, mc) if v is not None], default=None)
        r = A.ratio(mi, best)
        v = "Ingot refused" if refused else verdict(r, TARGET_RESNET)
        if v == "missing" or (compile_sides and mc is None):
            complete = False
        if v == "miss":
            misses.append("ResNet-50 %s" % dtype)
        bests = [max([x for x in (e, c) if x is not None], default=None) for e, c in
                 zip(ve, vc if vc else [None] * len(ve))]
        ms = " / ".join(A.fmt(med([A.at(x, "train", "ms_per_step", "median") for x in rs if x]), 0) for rs in (ri, re_, rc))
        rss = " / ".join(A.fmt(med([A.at(x, "memory", "peak_rss_bytes") for x in rs if x]), 0, 2**20)
                        for rs in (ri, re_, rc))
        lines.append("| %s | %s | %s | %s | %s%s | >= %.1f: %s | %s | %s | %s | %s |" % (
            dtype, "refused" if refused else cell(vi, 2), cell(ve, 2), cell(vc, 2) if compile_sides else "not run",
            "n/a" if r is None else "%.2f" % r, per_run_ratios(vi, bests), TARGET_RESNET, v,
            "n/a" if A.ratio(mi, me) is None else "%.2f" % A.ratio(mi, me),
            "n/a" if A.ratio(mi, mc) is None else "%.2f" % A.ratio(mi, mc), ms, rss))
        for key, rs, compiled in (("Ingot", ri, None), ("PyTorch eager", re_, False), ("torch.compile", rc, True)):
            notes += side_problems(key, dtype, rs, compiled)
    return "\n".join(lines), misses, complete, notes


def side_problems(key, dtype, records, compiled):
    """What a side's records say that is not its column's: another dtype, (not) compiled."""
    got = [r for r in records if r and not r.get("refused")]
    wrong = sorted({str(r.get("dtype")) for r in got if str(r.get("dtype", "")).split(" ")[0] != dtype})
    out = ["**%s %s reported dtype %s.**" % (key, dtype, ", ".join(wrong))] if wrong else []
    if compiled is not None and any(bool(r.get("compiled")) != compiled for r in got):
        out.append("**%s %s: a run %s compiled.**" % (key, dtype, "was not" if compiled else "was"))
    return out


def latency(record, what="median"):
    return A.at(record, "latency_b1_ms", what) if record else None


def mobilenet_table(runs, compile_sides):
    lines = ["| batch-1 latency | Ingot ms | PyTorch eager ms | torch.compile ms | Ingot / best PyTorch | target | "
             "Ingot / eager | Ingot / compile |", "|---|---|---|---|---|---|---|---|"]
    ri, re_, rc = (runs.get(k, []) for k in ("ingot", "torch-eager", "torch-compile"))
    misses, complete, notes = [], True, []
    for key, rs, compiled in (("Ingot", ri, None), ("PyTorch eager", re_, False), ("torch.compile", rc, True)):
        notes += side_problems(key, "f32", rs, compiled)
    for what in ("median", "p90"):
        vi, ve, vc = ([latency(r, what) for r in rs] for rs in (ri, re_, rc))
        mi, me, mc = med(vi), med(ve), med(vc)
        best = min([v for v in (me, mc) if v is not None], default=None)
        r = A.ratio(mi, best)
        bests = [min([x for x in (e, c) if x is not None], default=None) for e, c in
                 zip(ve, vc if vc else [None] * len(ve))]
        if what == "median":
            v = verdict(r, TARGET_LATENCY, lower_is_better=True)
            complete = v != "missing" and not (compile_sides and mc is None)
            if v == "miss":
                misses.append("MobileNetV2 latency")
            target = "<= %.1f: %s" % (TARGET_LATENCY, v)
        else:
            target = "—"
        lines.append("| %s | %s | %s | %s | %s%s | %s | %s | %s |" % (
            what, cell(vi, 2), cell(ve, 2), cell(vc, 2) if compile_sides else "not run",
            "n/a" if r is None else "%.2f" % r, per_run_ratios(vi, bests), target,
            "n/a" if A.ratio(mi, me) is None else "%.2f" % A.ratio(mi, me),
            "n/a" if A.ratio(mi, mc) is None else "%.2f" % A.ratio(mi, mc)))
    return "\n".join(lines), misses, complete, notes


def shown(cmd):
    """A command as run from the repository root, the paths inside it relative to the root."""
    def rel(a):
        for prefix in ("", "--save-init=", "data.image_folder.train=", "data.image_folder.test="):
            if a.startswith(prefix + E.ROOT + os.sep):
                return prefix + os.path.relpath(a[len(prefix):], E.ROOT)
        return a
    return shlex.join(rel(a) for a in cmd)


def commands_block(runner, keys, extra=()):
    cmds = [shown(runner.commands[k]) for k in keys if k in runner.commands] + list(extra)
    return ["```sh"] + cmds + ["```"] if cmds else []


def report(args, argv, facts, versions, note, results, runner, folders, minutes):
    quick = args.quick
    stamp = "%s, %d cores; %s; PyTorch %s, torchvision %s" % (
        facts["cpu"], facts["cores"], facts["date"], versions.get("torch", "?"), versions.get("torchvision", "?"))
    runs = "%d run%s per side" % (args.runs, "s" if args.runs > 1 else "")
    text = [
        "### `bench/compare --vision`", "",
        "%s; %s (%s), %d cores, Linux %s; load average %s before, %s after; `uptime` at the start: `%s`; "
        "%.1f minutes%s." % (facts["date"], facts["cpu"], facts["isa"], facts["cores"], facts["kernel"],
                             facts["load_start"], facts["load_end"], facts["uptime"], minutes,
                             " (`--quick`: a step or two per side, a smoke test: these figures say nothing about speed)"
                             if quick else ""), "",
        "Command: `%s`" % " ".join(["bench/compare"] + argv), "",
        "Versions: %s; PyTorch %s, torchvision %s, Pillow %s (`%s`). Ingot `--threads %d`, PyTorch "
        "`torch.set_num_threads(%d)`; %s, alternating. Environments: Ingot %s; PyTorch %s. Raw output: `%s/raw`." % (
            facts["ingot"] or "ingot ?", versions.get("torch", "?"), versions.get("torchvision", "?"),
            versions.get("pillow", "?"), os.path.relpath(args.torch_python_used, E.ROOT)
            if args.torch_python_used.startswith(E.ROOT) else args.torch_python_used, args.ingot_threads,
            args.torch_threads, runs, compare_amp.env_text(E.recorded_environ(E.ingot_environ(args.ingot_threads))),
            compare_amp.env_text(args.torch_variables), os.path.relpath(runner.out, E.ROOT)
            if runner.out.startswith(E.ROOT) else runner.out), ""]
    if note:
        text += [note, ""]
    busy = compare_amp.busy_note(facts)
    if busy:
        text.append(busy)
    misses, complete = [], True
    if "loader" in results:
        p = LOADER_QUICK if quick else LOADER
        table, m, c = loader_table(results["loader"], folders)
        misses, complete = misses + m, complete and c
        text += ["#### The loader alone", "",
                 "%s; %s. `bench/configs/loader_imagenet.yaml`: RandomResizedCrop 224 + horizontal flip + normalize, "
                 "batch 32, %d workers, %d timed batches after one untimed, %d repeat%s per run (each run's value: "
                 "the median of its repeats), against torchvision's ImageFolder + DataLoader with the same transforms "
                 "(bench/torch_loader.py). Folders of ImageNet-size JPEGs (%d x %d +- %d, %d classes). Memory: "
                 "Ingot's resident bytes when its loop ends (one process: the workers are threads) and, in "
                 "brackets, its peak (`wait4`'s ru_maxrss), medians over runs; torch's main process's ru_maxrss, and the main process "
                 "with its live workers by PSS (forked workers share pages with it, so their RSS would count those "
                 "twice). Flat: neither of Ingot's figures grows by more than %.2fx from the 1x folder to the 10x one." % (
                     stamp, runs, p["workers"], p["batches"], p["repeat"], "s" if p["repeat"] > 1 else "",
                     JPEGS["width"], JPEGS["height"], JPEGS["jitter"], JPEGS["classes"], TARGET_FLAT), "", table, ""]
        text += commands_block(runner, [], [shown(folders[label][1]) for label, _, _ in FOLDERS] + [
            shown(runner.commands[k]) for label, _, _ in FOLDERS for k in (("loader", label, "ingot"),
                                                                          ("loader", label, "torch"))
            if k in runner.commands]) + [""]
    if "resnet50" in results:
        p = RESNET50_QUICK if quick else RESNET50
        table, m, c, notes = resnet_table(results["resnet50"], not args.no_torch_compile)
        misses, complete = misses + m, complete and c
        text += ["#### ResNet-50 training at 224", "",
                 "%s; %s. `bench/configs/resnet50.yaml`, batch %d, SGD with momentum, random in-memory data, the "
                 "same initial weights; warm-up %d, %d x %d timed steps (torch.compile: at least 3 warm-up steps, "
                 "its compilation among them). bf16: Ingot `--set train.amp.dtype=bf16`, PyTorch "
                 "`torch.autocast(\"cpu\", dtype=torch.bfloat16)` (`--amp bf16`), f32 weights on both sides. "
                 "Images/s: median over runs (min-max); the ratio is against the better of eager and torch.compile "
                 "in the same dtype." % (stamp, runs, p["batch"], p["warmup"], p["repeat"], p["steps"]), "",
                 table, ""] + (notes and [" ".join(notes), ""] or [])
        text += commands_block(runner, [("resnet50", k) for k, _, _ in RESNET_SIDES]) + [""]
    if "mobilenet" in results:
        p = MOBILENET_QUICK if quick else MOBILENET
        table, m, c, notes = mobilenet_table(results["mobilenet"], not args.no_torch_compile)
        misses, complete = misses + m, complete and c
        text += ["#### MobileNetV2 batch-1 latency at 224", "",
                 "%s; %s. `bench/configs/mobilenet_v2.yaml` in eval mode (PyTorch under `torch.inference_mode`), "
                 "f32, the same initial weights; %d x %d single forwards per run, each timed, after a warm-up (Ingot's "
                 "bench first trains and infers %d step at batch %d; torch.compile compiles in its warm-up). ms: "
                 "median over runs of each run's median (min-max)." % (
                     stamp, runs, p["repeat"], p["latency_iters"], p["steps"], p["batch"]), "", table, ""] + (
                     notes and [" ".join(notes), ""] or [])
        text += commands_block(runner, [("mobilenet_v2", k) for k, _ in MOBILENET_SIDES]) + [""]
    if runner.failed:
        text += ["**Runs that failed (left out of the medians; their logs are under --out/raw):** %s." %
                 ", ".join("`%s`" % n for n in runner.failed), ""]
    text.append("Targets missed: %s." % (", ".join(misses) if misses else "none"))
    return "\n".join(text), complete


def main(args, argv, log):
    """bench/compare's entry for --vision; returns the exit code."""
    t0 = time.time()
    uptime = E.command_output(["uptime"]).strip()
    log("uptime: %s" % uptime)
    parts = args.vision_parts.split(",")
    try:
        python, version, note = compare_amp.find_torch_python(args.torch_python, args.install_torch, log)
        if args.install_torch:
            install_torchvision(python, log)
    except GPU.Unavailable as e:
        log("error: %s" % e)
        return 3
    except subprocess.CalledProcessError as e:
        log("error: %s" % e)
        return 2
    versions = torch_versions(python)
    if "torchvision" not in versions:
        log("error: %s has no torchvision (and Pillow); --install-torch adds them to the build's venv" % python)
        return 3
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
    facts["load_start"], facts["uptime"] = E.loadavg(), uptime
    out = os.path.abspath(os.path.join(args.out, "vision"))
    runner = Runner(out, log)
    sides = Sides(runner, ingot, python, args.ingot_threads, torch_env, args.quick)
    log("PyTorch %s, torchvision %s (%s); Ingot %s; raw output in %s/raw" % (
        versions.get("torch"), versions.get("torchvision"), python, ingot, out))
    results, folders = {}, {}
    summary_path = os.path.join(out, "vision.json")

    def keep():
        with open(summary_path, "w") as f:
            json.dump({"facts": facts, "versions": versions, "argv": argv,
                       "results": {part: {"|".join(k) if isinstance(k, tuple) else k: v for k, v in res.items()}
                                   for part, res in results.items()},
                       "commands": {"|".join(k): shown(c) for k, c in runner.commands.items()}}, f, indent=1)

    if "loader" in parts:
        try:
            folders = ensure_jpegs(out, not args.no_build, log)
        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
            log("error: the JPEG folders: %s" % e)
            return 2
        results["loader"] = loader_runs(sides, folders, args.runs, args.quick, log)
        keep()
    if "mobilenet" in parts:
        results["mobilenet"] = model_runs(sides, "mobilenet_v2", MOBILENET_SIDES,
                                          MOBILENET_QUICK if args.quick else MOBILENET, "latency", args.runs,
                                          not args.no_torch_compile, log)
        keep()
    if "resnet50" in parts:
        results["resnet50"] = model_runs(sides, "resnet50", RESNET_SIDES, RESNET50_QUICK if args.quick else RESNET50,
                                         "train", args.runs, not args.no_torch_compile, log)
        keep()
    facts["load_end"] = E.loadavg()
    text, complete = report(args, argv, facts, versions, note, results, runner, folders, (time.time() - t0) / 60)
    keep()
    print(text)
    if args.quick and not args.no_write:
        log("--quick: bench/RESULTS.md left alone (a smoke test's figures are not measurements)")
    elif not args.no_write:
        R.replace_section(args.results, text, BEGIN, END)
    log("done in %.1f minutes; summary in %s" % ((time.time() - t0) / 60, summary_path))
    if not complete:
        log("error: the tables are incomplete (a side failed; see %s/raw/*.log)" % out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit("run it as bench/compare --vision")
