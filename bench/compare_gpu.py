"""bench/compare --device cuda: Ingot and PyTorch side by side on this machine's NVIDIA GPU.

Finds a python whose PyTorch has CUDA (--python, $INGOT_TORCH_PYTHON, python3 on PATH, then
/usr/bin/python3) and an Ingot with the cuda plugin (--ingot, build/apps/ingot/ingot, then a
scripts/gpu-bundle folder), gives the Ingot side this machine's CUDA libraries the way
scripts/gpu-check does, then:
  e2e      the workloads of bench/configs (mlp, cnn, resnet8, resnet18) at batch 256, alternating
           `ingot bench --set backend=cuda` and bench/torch_bench.py --device cuda from the same
           initial weights; f32, TF32 as --tf32 says on both sides (default: in convolutions,
           not in matmuls, PyTorch's default and the cuda plugin's)
  kernels  the bench_cuda_* programs (Ingot against cuBLAS, cudaMemcpy and cuDNN in one process,
           and Ingot's ops), and bench/torch_gpu_ops.py for PyTorch's side of the same ops; f32
           without TF32 always
Never installs or builds anything. No GPU, no PyTorch with CUDA, or an Ingot whose cuda backend
cannot run: one line saying which, exit 3.
"""
import glob
import json
import os
import shutil
import subprocess
import time

import compare_env as E
import compare_gpu_report as G
import compare_report as R

WORKLOADS = ("mlp", "cnn", "resnet8", "resnet18")
BATCH = 256
# Steps per run: enough timed work per block to dwarf a synchronisation, few enough that a run of
# all four workloads stays within minutes where Ingot is several times slower than PyTorch.
FULL = {"mlp": dict(warmup=5, steps=50, repeat=3, latency_iters=100),
        "cnn": dict(warmup=5, steps=50, repeat=3, latency_iters=100),
        "resnet8": dict(warmup=5, steps=20, repeat=3, latency_iters=50),
        "resnet18": dict(warmup=3, steps=10, repeat=3, latency_iters=30)}
QUICK = {w: dict(warmup=1, steps=2, repeat=1, latency_iters=5) for w in WORKLOADS}
PROGRAMS = ("bench_cuda_matmul", "bench_cuda_matmul_tf32", "bench_cuda_elementwise", "bench_cuda_conv",
            "bench_cuda_ops")
CUDA_LIBS = ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9")
# --tf32 -> the cuda plugin's switches (torch_bench.py's TF32 sets PyTorch's the same way).
TF32_SWITCHES = {"default": {"INGOT_CUDA_CONV_TF32": "1", "INGOT_CUDA_MATMUL_TF32": "0"},
                 "off": {"INGOT_CUDA_CONV_TF32": "0", "INGOT_CUDA_MATMUL_TF32": "0"},
                 "on": {"INGOT_CUDA_CONV_TF32": "1", "INGOT_CUDA_MATMUL_TF32": "1"}}
PARTS = ("e2e", "kernels")


class Unavailable(Exception):
    """The GPU, PyTorch's CUDA or Ingot's cuda backend is missing here (exit 3)."""


def probe_python(python):
    """(True, "torch X, CUDA c, DEVICE") when `python` imports torch and yaml and sees a GPU, else (False, why)."""
    code = ("import torch, yaml; ok = torch.cuda.is_available(); "
            "print(ok, 'torch', torch.__version__, 'CUDA', torch.version.cuda, torch.cuda.get_device_name() if ok else "
            "'sees no CUDA device')")
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    if r.returncode != 0:
        return False, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    ok, _, text = r.stdout.strip().partition(" ")
    return ok == "True", text


def find_torch_python(explicit):
    """The first python whose PyTorch sees a GPU; Unavailable naming what each candidate said."""
    candidates = [explicit] if explicit else [os.environ.get("INGOT_TORCH_PYTHON"), shutil.which("python3"),
                                              "/usr/bin/python3"]
    tried = []
    for py in [c for i, c in enumerate(candidates) if c and c not in candidates[:i]]:
        ok, text = probe_python(py)
        if ok:
            return py, text
        tried.append("%s: %s" % (py, text))
    raise Unavailable("no python with a CUDA-enabled PyTorch (and PyYAML) that sees a GPU (%s); give one with "
                      "--python PATH" % "; ".join(tried))


def which_ingot(explicit):
    if explicit:
        return os.path.abspath(explicit)
    build = os.environ.get("INGOT_BUILD", os.path.join(E.ROOT, "build"))
    bundle = os.path.join(E.ROOT, "build-gpu-bundle", "bin", "ingot")
    for path in (os.path.join(build, "apps", "ingot", "ingot"), bundle):
        if os.access(path, os.X_OK):
            return path
    return shutil.which("ingot")


def find_bench_dir(explicit, ingot):
    """The folder of the bench_cuda_* programs: a bundle's bin/ (beside ingot) or the build's bench/."""
    here = os.path.dirname(ingot)
    for d in [explicit] if explicit else [here, os.path.join(os.path.dirname(os.path.dirname(here)), "bench")]:
        if d and os.access(os.path.join(d, PROGRAMS[0]), os.X_OK):
            return d
    return explicit or here


def cuda_library_dirs(python):
    """Folders holding CUDA_LIBS: the usual CUDA folders, then the torch python's nvidia wheels."""
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/lib"] + sorted(glob.glob("/usr/local/cuda-*/lib64"))
    dirs.append("/usr/lib/x86_64-linux-gnu")
    r = subprocess.run([python, "-c", "import site, json; print(json.dumps(site.getsitepackages() + "
                        "[site.getusersitepackages()]))"], capture_output=True, text=True)
    sites = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else []
    found = []
    for lib in CUDA_LIBS:
        hit = next((d for d in dirs if os.path.exists(os.path.join(d, lib))), None)
        if hit is None:
            hit = next((os.path.dirname(p) for s in sites for p in sorted(glob.glob(os.path.join(s, "nvidia", "*",
                                                                                                 "lib", lib)))), None)
        if hit and hit not in found:
            found.append(hit)
    return found


def ingot_environ(ingot, python, tf32):
    """Ingot's environment: the bundle's plugin folder, this machine's CUDA libraries, the TF32 switches."""
    env = dict(os.environ)
    plugins = os.path.join(os.path.dirname(os.path.dirname(ingot)), "plugins")
    if not env.get("INGOT_PLUGIN_PATH") and os.path.exists(os.path.join(plugins, "libingot_cuda.so")):
        env["INGOT_PLUGIN_PATH"] = plugins
    libs = cuda_library_dirs(python)
    env["LD_LIBRARY_PATH"] = ":".join(libs + [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d and
                                              d not in libs])
    env.update(TF32_SWITCHES[tf32])
    env.update(E.BOTH)
    return env


class Runner:
    """Runs one program, keeps its output under out/raw, returns (exit code, stdout, last stderr line)."""

    def __init__(self, out, log):
        self.out, self.log = out, log
        os.makedirs(os.path.join(out, "raw"), exist_ok=True)
        os.makedirs(os.path.join(out, "init"), exist_ok=True)

    def run(self, cmd, env, name, timeout):
        try:
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=E.ROOT, timeout=timeout)
            rc, stdout, stderr = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, stdout, stderr = 124, e.stdout or "", "timed out after %d s" % timeout
            stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
        with open(os.path.join(self.out, "raw", name + ".out"), "w") as f:
            f.write(stdout)
        with open(os.path.join(self.out, "raw", name + ".log"), "w") as f:
            f.write("$ %s\n%s" % (" ".join(cmd), stderr))
        tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
        if rc != 0:
            self.log("%s failed (exit %d): %s [see %s/raw/%s.log]" % (name, rc, tail, self.out, name))
        return rc, stdout, tail


def last_json(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return None


def flags(p):
    """The step counts both `ingot bench` and torch_bench.py take."""
    return ["--json", "--warmup", str(p["warmup"]), "--steps", str(p["steps"]), "--repeat", str(p["repeat"]),
            "--latency-iters", str(p["latency_iters"])]


def e2e(runner, ingot, python, ienv, args, params):
    """Alternating runs of both sides per workload: ({w: [ingot results]}, {w: [torch results]})."""
    config = {w: os.path.join(E.ROOT, "bench", "configs", w + ".yaml") for w in WORKLOADS}
    init = {w: os.path.join(runner.out, "init", w + ".safetensors") for w in WORKLOADS}
    for w in WORKLOADS:  # the initial weights, and proof that Ingot's cuda backend runs
        tiny = dict(warmup=0, steps=1, repeat=1, latency_iters=1)
        rc, _, tail = runner.run([ingot, "bench", config[w]] + flags(tiny) + [
            "--batch-size", "1", "--infer-batch", "1", "--set", "backend=cuda", "--save-init", init[w]],
            ienv, "init-ingot-" + w, 180)
        if rc == 3:
            raise Unavailable("Ingot's cuda backend cannot run here: " + tail)
    ingot_runs, torch_runs = {w: [] for w in WORKLOADS}, {w: [] for w in WORKLOADS}
    size = ["--batch-size", str(BATCH), "--infer-batch", str(BATCH)]
    for i in range(args.runs):
        for w in WORKLOADS:
            p = params[w]
            rc, out, _ = runner.run([ingot, "bench", config[w]] + flags(p) + size + ["--set", "backend=cuda"],
                                    ienv, "run%d-ingot-%s" % (i, w), 300)
            res = last_json(out) if rc == 0 else None
            if res and not str(res.get("device", "")).startswith("cuda"):
                runner.log("error: ingot bench ran %s on %s, not on the GPU" % (w, res.get("device")))
                res = None
            ingot_runs[w].append(res)
            cmd = [python, os.path.join(E.ROOT, "bench", "torch_bench.py"), config[w], "--device", "cuda"] + flags(p)
            cmd += size + ["--tf32", args.tf32] + (["--init", init[w]] if os.path.exists(init[w]) else [])
            rc, out, tail = runner.run(cmd, dict(os.environ, **E.BOTH), "run%d-torch-%s" % (i, w), 300)
            if rc == 3:
                raise Unavailable(tail)
            torch_runs[w].append(last_json(out) if rc == 0 else None)
        runner.log("run %d/%d done" % (i + 1, args.runs))
    return ingot_runs, torch_runs


def kernels(runner, bench_dir, python, ienv, quick):
    """({name: counters} of every bench_cuda_* program, torch_gpu_ops.py's JSON)."""
    env = dict(ienv)  # each program pins the TF32 switch its rows need
    results = {}
    for prog in PROGRAMS:
        path = os.path.join(bench_dir, prog)
        if not os.access(path, os.X_OK):
            runner.log("error: %s not found in %s (give --bench-dir)" % (prog, bench_dir))
            continue
        out = os.path.join(runner.out, "raw", prog + ".json")
        rc, _, tail = runner.run([path, "--benchmark_min_time=%s" % ("0.05" if quick else "0.2"),
                                  "--benchmark_out=" + out, "--benchmark_out_format=json"], env, prog, 180)
        if rc == 3:
            raise Unavailable(tail)
        try:
            with open(out) as f:
                results.update(G.gbench_results(json.load(f)))
        except (OSError, ValueError):
            pass
    rc, out, tail = runner.run([python, os.path.join(E.ROOT, "bench", "torch_gpu_ops.py"), "--min-time",
                                "0.05" if quick else "0.3"], dict(os.environ, **E.BOTH), "torch_gpu_ops", 300)
    if rc == 3:
        raise Unavailable(tail)
    return results, (last_json(out) if rc == 0 else None)


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def report(args, argv, facts, parts, e2e_runs, kernel_results, minutes):
    """The markdown section and whether it is complete."""
    lines = ["# Ingot vs PyTorch on the GPU (`bench/compare --device cuda`)", "",
             "%s; %s; %s; Ingot %s; %.1f minutes." % (
                 time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), facts["gpu"], facts["torch"], facts["ingot"],
                 minutes), "",
             "Command: `%s`" % " ".join(["bench/compare"] + argv), "",
             "Ingot's CUDA libraries: %s." % (", ".join(facts["libs"]) or "the loader's default paths"), ""]
    complete, misses = True, []
    if "kernels" in parts:
        ingot, torch_doc = kernel_results
        vt, vmiss, vmissing = G.vendor_table(ingot)
        tt, tmissing = G.torch_ops_table(ingot, torch_doc)
        complete = complete and not vmissing and not tmissing
        misses += vmiss
        lines += ["## Ingot against the vendor libraries", "",
                  "The bench_cuda_* programs: the same work through Ingot's public API and through cuBLAS "
                  "(cublasGemmEx, same math; TF32 checked on and off), cudaMemcpy device to device or cuDNN's "
                  "legacy API (the same heuristic algorithm) called directly, alternating in one process; rates in "
                  "TFLOP/s or GB/s of bytes moved, time per call in ms. f32 rows without TF32 (pinned on both "
                  "sides), tf32 rows with it.",
                  "", vt, "",
                  "## Ingot's ops against PyTorch's", "",
                  "The same shapes timed the same way (batches of back-to-back calls, one synchronisation per batch; "
                  "`tiny_add`: 10,000 one-element adds, then one wait). PyTorch %s, cudnn.benchmark on, no TF32. "
                  "Above 1: Ingot is faster." % ((torch_doc or {}).get("version", "?")), "", tt, ""]
    if "e2e" in parts:
        ingot_runs, torch_runs = e2e_runs
        et, emissing = G.e2e_table(WORKLOADS, ingot_runs, torch_runs, BATCH)
        complete = complete and not emissing
        params = QUICK if args.quick else FULL
        lines += ["## Training and inference", "",
                  "`bench/configs/{%s}.yaml` (resnet18: the CIFAR ResNet-18, 3x32x32, 11.2 M parameters), f32%s, "
                  "AdamW, train and inference batch %d, random data on the GPU, the same initial weights on both "
                  "sides; PyTorch with cudnn.benchmark on. %d run%s per side, alternating; each run: %s." % (
                      ",".join(WORKLOADS), {"default": " with TF32 in convolutions only (both frameworks' default)",
                                            "off": " without TF32", "on": " with TF32 in convolutions and matmuls"
                                            }[args.tf32], BATCH,
                      args.runs, "s" if args.runs > 1 else "", "; ".join(
                          "%s warm-up %d, %d x %d timed steps, %d latency iterations" % (
                              w, p["warmup"], p["repeat"], p["steps"], p["latency_iters"]) for w, p in params.items())),
                  "", et, "", G.e2e_details(WORKLOADS, ingot_runs, torch_runs), ""]
    lines.append("Targets missed: %s." % (", ".join(misses) if misses else "none"))
    return "\n".join(lines), complete


def main(args, argv, log):
    """bench/compare's entry for --device cuda; returns the exit code."""
    t0 = time.time()
    parts = [p for p in args.gpu_parts.split(",") if p]
    if not parts or not set(parts) <= set(PARTS):
        log("error: --gpu-parts %s: expected a comma list of %s" % (args.gpu_parts, ",".join(PARTS)))
        return 2
    try:
        python, torch_text = find_torch_python(args.python)
        ingot = which_ingot(args.ingot)
        if not E.has_bench(ingot):
            log("error: no Ingot with a 'bench' command (%s); give --ingot PATH (a build's apps/ingot/ingot or a "
                "scripts/gpu-bundle folder's bin/ingot)" % ingot)
            return 2
        ienv = ingot_environ(ingot, python, args.tf32)
        out = os.path.abspath(os.path.join(args.out, "gpu"))
        runner = Runner(out, log)
        log("PyTorch: %s (%s); Ingot: %s; raw output in %s" % (python, torch_text, ingot, out))
        e2e_runs = e2e(runner, ingot, python, ienv, args, QUICK if args.quick else FULL) if "e2e" in parts else None
        kernel_results = kernels(runner, find_bench_dir(args.bench_dir, ingot), python, ienv,
                                 args.quick) if "kernels" in parts else None
    except Unavailable as e:
        log("error: %s" % e)
        return 3
    facts = {"gpu": command_output(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                    "--format=csv,noheader"]).replace("\n", "; ") or "GPU ?",
             "torch": "PyTorch: " + torch_text, "ingot": command_output([ingot, "--version"]) or "?",
             "libs": [d for d in ienv["LD_LIBRARY_PATH"].split(":") if d]}
    text, complete = report(args, argv, facts, parts, e2e_runs, kernel_results, (time.time() - t0) / 60)
    print(text)
    if not args.no_write:
        R.replace_section(args.results, text, G.GPU_BEGIN, G.GPU_END)
    log("done in %.1f minutes" % ((time.time() - t0) / 60))
    if not complete:
        log("error: the GPU tables are incomplete (see %s/raw/*.log)" % out)
        return 1
    return 0
