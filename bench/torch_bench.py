"""PyTorch side of bench/compare: the workload of `ingot bench CONFIG.yaml`, in torch.nn.

    /usr/bin/python3 bench/torch_bench.py CONFIG.yaml [--json] [--warmup N] [--steps N] [--repeat R]
        [--batch-size B] [--infer-batch B] [--latency-iters N] [--threads T[,T...]]
        [--init FILE.safetensors] [--set key=value ...] [--parts train,inference,latency]
        [--device cpu|cuda] [--tf32 default|off|on] [--amp f32|bf16] [--checkpoint-segments N] [--compile]

Reads the same Ingot YAML config (model preset mlp / simple_cnn / resnet or a `layers:` list; the
ImageNet presets (resnet 18-152, vgg, mobilenet_v2) as torchvision's models, which need torchvision,
train.optimizer, train.loss, clipping, data.batch_size / eval_batch_size), builds the torch.nn
model whose state_dict names are Ingot's (tests/golden/make_nn.py, bench/torch_layers.py), loads
`--init` (the file `ingot bench --save-init` wrote) strictly, and measures on random data in
memory on --device (cuda: model and data on the GPU, cudnn.benchmark on, TF32 as --tf32 says,
every timed block ends with torch.cuda.synchronize(); a python whose torch has no CUDA exits 3):
  train      warm-up steps, then `repeat` blocks of `steps` steps (zero_grad, forward,
             cross-entropy, backward, optimizer step); one images/s and ms/step value per block
  inference  eval mode under torch.inference_mode at infer-batch, the same warm-up / blocks
  latency    eval mode, batch 1, `repeat` x `latency-iters` single forwards each timed (after
             at least one warm-up forward); median and nearest-rank p90
Mixed precision and gradient checkpointing (torch_levers.py), from the config's train.amp.dtype and
train.checkpointing.segments (so the same --set lines drive `ingot bench`) or --amp /
--checkpoint-segments: training forward and loss under torch.autocast(dtype=bfloat16) with f32
weights and backward outside it, inference and latency under autocast too; the model's
nn.Sequential through checkpoint_sequential(..., use_reentrant=False). Before the timed blocks one
more (untimed) step measures the activation memory: the distinct storages autograd saved for
backward that did not exist before the step (memory.activation_bytes, as `ingot bench` reports it),
and on a CPU the step's peak above its start from the profiler's allocation records
(memory.step_peak_bytes).
`--compile` (PyTorch 2.x) measures torch.compile(model) with the default inductor backend: its
compilation happens in the warm-up (at least 3 steps, forwards and batch-1 forwards), so the timed
blocks see the compiled model only.
`--json` prints one JSON object per (config, thread count) line, in `ingot bench --json`'s schema
plus a "runtime" object (the BLAS library torch loaded, OpenBLAS's core and threads, the
environment). Several configs or `--threads 1,2` are for bench/compare's sweep: one process, one
line each.
"""
import argparse
import contextlib
import ctypes
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "golden"))
import make_nn  # noqa: E402  (the torch.nn twins of Ingot's presets)
import st_io  # noqa: E402
import torch_layers  # noqa: E402
import torch_levers  # noqa: E402

PARTS = ("train", "inference", "latency")


class BenchError(Exception):
    exit_code = 2


class NoDevice(BenchError):
    """The requested device is not usable here (exit 3, like `ingot` without a required backend)."""
    exit_code = 3


def apply_set(cfg, item):
    """--set model.width=64: a dotted path into the YAML, the value parsed as YAML."""
    if "=" not in item:
        raise BenchError("--set %s: expected key=value, e.g. model.width=64" % item)
    key, value = item.split("=", 1)
    node, parts = cfg, key.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise BenchError("--set %s: '%s' is not a section" % (item, p))
    node[parts[-1]] = yaml.safe_load(value)


def load_config(path, sets):
    try:
        with open(path) as f:
            cfg = yaml.safe_load(f) or {}
    except OSError as e:
        raise BenchError("%s: %s" % (path, e.strerror))
    for s in sets:
        apply_set(cfg, s)
    return cfg


def model_spec(cfg, path):
    """The model section with input_shape resolved the way Ingot's model builder does."""
    m = dict(cfg.get("model") or {})
    if "layers" in m and "preset" not in m:
        if not m.get("input_shape"):
            raise BenchError("%s: a model.layers list needs model.input_shape" % path)
        m["preset"] = "layers"
        return m, None
    kind = m.get("preset")
    if kind not in ("mlp", "simple_cnn", "resnet", "vgg", "mobilenet_v2"):
        raise BenchError("%s: model.preset must be mlp, simple_cnn, resnet, vgg or mobilenet_v2, or give "
                         "model.layers" % path)
    if kind in ("vgg", "mobilenet_v2") or (kind == "resnet" and m.get("style", "imagenet" if m.get(
            "depth") in (18, 34, 50, 101, 152) else "cifar") == "imagenet"):
        m["torchvision"] = True
        m["input_shape"] = list(m.get("input_shape") or [3, 224, 224])
        return m, m.get("classes", 10 if kind == "resnet" else 1000)
    if kind == "mlp":
        sizes = m.get("sizes")
        if not sizes or len(sizes) < 2:
            raise BenchError("%s: preset mlp needs model.sizes" % path)
        m["input_shape"] = m.get("input_shape") or [sizes[0]]
        return m, sizes[-1]
    chw = list(m.get("input_shape") or ([1, 28, 28] if kind == "simple_cnn" else [3, 32, 32]))
    if "in_channels" in m:
        chw[0] = m["in_channels"]
    m["input_shape"] = chw
    if kind == "resnet":
        m.setdefault("depth", 20)
    return m, m.get("classes", 10)


def make_optimizer(model, o, path):
    """train.optimizer with torch's defaults; biases and norm weights (dim <= 1) get no weight
    decay unless no_decay_on_bias_and_norm is false (Ingot's rule)."""
    o = dict(o or {"type": "adamw"})
    kind = o.get("type", "adamw")
    params = list(model.parameters())
    if o.get("no_decay_on_bias_and_norm", True):
        groups = [{"params": [p for p in params if p.dim() > 1]},
                  {"params": [p for p in params if p.dim() <= 1], "weight_decay": 0.0}]
        groups = [g for g in groups if g["params"]]
    else:
        groups = [{"params": params}]
    if kind == "sgd":
        return torch.optim.SGD(groups, lr=o.get("lr", 0.01), momentum=o.get("momentum", 0.0),
                               dampening=o.get("dampening", 0.0), weight_decay=o.get("weight_decay", 0.0),
                               nesterov=o.get("nesterov", False))
    if kind not in ("adam", "adamw"):
        raise BenchError("%s: train.optimizer.type must be sgd, adam or adamw, got %s" % (path, kind))
    cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
    return cls(groups, lr=o.get("lr", 1e-3), betas=tuple(o.get("betas", (0.9, 0.999))), eps=o.get("eps", 1e-8),
               weight_decay=o.get("weight_decay", 0.01 if kind == "adamw" else 0.0), amsgrad=o.get("amsgrad", False))


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def timed_blocks(fn, warmup, steps, repeat, target_s=0.0, sync=None):
    """Seconds per call of each of `repeat` blocks of `steps` calls, after `warmup` calls. With
    target_s (bench/compare's sweep), a block has about target_s seconds of calls, at most steps.
    `sync` (a GPU's wait) runs before the clock starts and before it is read at a block's end."""
    sync = sync or (lambda: None)
    t0 = time.perf_counter()
    for _ in range(max(warmup, 1 if target_s else 0)):
        fn()
    sync()
    if target_s:
        per_call = (time.perf_counter() - t0) / max(warmup, 1)
        steps = max(1, min(steps, round(target_s / max(per_call, 1e-9))))
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / steps)
    return out


def blas_info():
    """The BLAS library torch actually mapped (LD_LIBRARY_PATH / update-alternatives decide), and
    what OpenBLAS says about itself."""
    libs = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = os.path.basename(path)
            if (name.startswith("libopenblas") or name.startswith("libblas") or name.startswith("libmkl")) \
                    and path not in libs:
                libs.append(path)
    info = {"libraries": [os.path.realpath(p) for p in libs]}
    for p in libs:
        if "openblas" not in os.path.realpath(p):
            continue
        try:
            lib = ctypes.CDLL(p)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            info["openblas_config"] = lib.openblas_get_config().decode()
            info["openblas_core"] = lib.openblas_get_corename().decode()
            info["openblas_threads"] = lib.openblas_get_num_threads()
            info["openblas_parallel"] = {0: "sequential", 1: "pthread", 2: "openmp"}.get(
                lib.openblas_get_parallel(), "?")
            info["openblas_variant"] = os.path.basename(os.path.dirname(os.path.realpath(p)))
            break
        except (OSError, AttributeError):
            continue
    return info


def runtime_info():
    keys = ("LD_LIBRARY_PATH", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "GOTO_NUM_THREADS",
            "OMP_PROC_BIND", "OMP_PLACES", "KMP_AFFINITY", "DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA")
    show = torch.__config__.show()
    dnnl = next((ln.split("MKL-DNN")[-1].strip() for ln in show.splitlines() if "MKL-DNN" in ln), "")
    return {"torch_threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads(),
            "onednn": dnnl.split(" ")[0], "mkldnn_enabled": torch.backends.mkldnn.is_available(),
            "python": sys.version.split()[0], "blas": blas_info(),
            "env": {k: os.environ[k] for k in keys if k in os.environ}}


# --tf32: (convolutions, matmuls) may use TF32. "default" is PyTorch's default and the cuda
# plugin's (INGOT_CUDA_CONV_TF32=1, INGOT_CUDA_MATMUL_TF32=0).
TF32 = {"default": (True, False), "off": (False, False), "on": (True, True)}


def cuda_device(tf32):
    """torch.device("cuda") set up as bench/compare compares it: cuDNN autotuning on, TF32 in
    convolutions and matmuls as TF32[tf32] says; NoDevice when this torch cannot use a GPU."""
    if not torch.cuda.is_available():
        raise NoDevice("%s: torch %s sees no CUDA device (CUDA build: %s); run it with a python whose PyTorch has "
                       "CUDA on a machine with an NVIDIA GPU" % (sys.executable, torch.__version__, torch.version.cuda))
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = TF32[tf32]
    return torch.device("cuda")


def build_model(spec, classes):
    """(model, classes) for a model spec: a preset (make_nn; `classes` from model_spec) or a layers
    list (torch_layers; its output's last dimension)."""
    if spec.get("torchvision"):  # the same layout and names as Ingot's ImageNet presets
        import torchvision
        kind = spec["preset"]
        if kind == "resnet":
            return getattr(torchvision.models, "resnet%d" % spec["depth"])(
                num_classes=classes, zero_init_residual=spec.get("zero_init_residual", False)), classes
        if kind == "vgg":
            name = "vgg%d%s" % (spec.get("depth", 16), "_bn" if spec.get("batch_norm") else "")
            return getattr(torchvision.models, name)(num_classes=classes, dropout=spec.get("dropout", 0.5)), classes
        return torchvision.models.mobilenet_v2(num_classes=classes, width_mult=spec.get("width_mult", 1.0),
                                               dropout=spec.get("dropout", 0.2)), classes
    if spec["preset"] != "layers":
        return make_nn.torch_model(spec), classes
    try:
        model, out_shape = torch_layers.build(spec["layers"], spec["input_shape"])
    except (torch_layers.LayersError, RuntimeError) as e:
        raise BenchError("model.layers: %s" % e)
    return model, out_shape[-1]


def bench(path, init, args, threads):
    cfg = load_config(path, args.set)
    spec, classes = model_spec(cfg, path)
    data, train = cfg.get("data") or {}, cfg.get("train") or {}
    batch = args.batch_size or data.get("batch_size", 128)
    infer_batch = args.infer_batch
    torch.set_num_threads(threads)
    torch.manual_seed(cfg.get("seed", 0))
    device = cuda_device(args.tf32) if args.device == "cuda" else torch.device("cpu")
    sync = torch.cuda.synchronize if device.type == "cuda" else None
    model, classes = build_model(spec, classes)
    if init:
        state, _ = st_io.load_file(init)
        try:
            model.load_state_dict(state, strict=True)
        except RuntimeError as e:
            raise BenchError("%s: does not match the model of %s: %s" % (init, path, str(e).splitlines()[0]))
    model.to(device)
    try:
        levers = torch_levers.Levers.from_config(train, args.amp, args.checkpoint_segments, model, device)
    except torch_levers.LeverError as e:
        raise BenchError("%s: %s" % (path, e))
    opt = make_optimizer(model, train.get("optimizer"), path)
    run_model = torch.compile(model) if args.compile else model
    warmup = max(args.warmup, 3) if args.compile else args.warmup
    smoothing = (train.get("loss") or {}).get("label_smoothing", 0.0)
    clip_norm, clip_value = train.get("clip_grad_norm"), train.get("clip_grad_value")
    shape = tuple(spec["input_shape"])
    x, y = torch.randn(batch, *shape, device=device), torch.randint(0, classes, (batch,), device=device)
    parts = set(args.parts.split(","))
    out = {"framework": "pytorch", "version": torch.__version__, "config": path, "model": spec["preset"],
           "params": sum(p.numel() for p in model.parameters()), "dtype": levers.dtype_name,
           "infer_dtype": levers.dtype_name, "checkpointing_segments": levers.segments,
           "checkpointing": levers.checkpoint_method, "threads": threads,
           "batch_size": batch, "infer_batch": infer_batch, "warmup": args.warmup, "steps": args.steps,
           "repeat": args.repeat, "device": str(device), "compiled": bool(args.compile), "train": None, "inference": None, "latency_b1_ms": None}

    def step(saved=None, peak=None):
        opt.zero_grad(set_to_none=True)
        with peak or contextlib.nullcontext():
            with levers.forward_context(saved):
                loss = F.cross_entropy(levers.train_forward(run_model, x), y, label_smoothing=smoothing)
            loss.backward()
        loss.item()  # as `ingot bench` reads the loss each step
        if clip_norm:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        if clip_value:
            torch.nn.utils.clip_grad_value_(model.parameters(), clip_value)
        opt.step()

    peak_allocated = activation_bytes = step_peak = None
    if "train" in parts:
        model.train()
        for _ in range(warmup):
            step()
        # One untimed step that measures what the graph keeps between forward and backward, and
        # the peak above the start of forward and backward (on a GPU: the allocator's own).
        saved = torch_levers.SavedBytes(list(model.parameters()) + list(model.buffers()) + [x, y])
        peak = torch_levers.StepPeak() if device.type == "cpu" else None
        step(saved, peak)
        activation_bytes, step_peak = saved.total(), peak and peak.peak
        if device.type == "cuda":  # from the first timed step on, as `ingot bench` counts it
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        secs = timed_blocks(step, 0, args.steps, args.repeat, args.target_seconds, sync)
        if device.type == "cuda":
            peak_allocated = torch.cuda.max_memory_allocated()
        out["train"] = {"images_per_s": summary([batch / s for s in secs]),
                        "ms_per_step": summary([1e3 * s for s in secs])}
    model.eval()
    with torch.inference_mode(), levers.autocast():
        if "inference" in parts:
            xi = torch.randn(infer_batch, *shape, device=device)
            secs = timed_blocks(lambda: run_model(xi), warmup, args.steps, args.repeat, args.target_seconds, sync)
            out["inference"] = {"images_per_s": summary([infer_batch / s for s in secs]),
                                "ms_per_batch": summary([1e3 * s for s in secs])}
        if "latency" in parts:
            x1 = torch.randn(1, *shape, device=device)
            ms = sorted(1e3 * s for s in timed_blocks(lambda: run_model(x1), max(warmup, 1), 1,
                                                        args.repeat * args.latency_iters, sync=sync))
            out["latency_b1_ms"] = {"median": statistics.median(ms), "p90": ms[max(0, -(-9 * len(ms) // 10) - 1)]}
    out["memory"] = {"peak_allocated_bytes": peak_allocated, "activation_bytes": activation_bytes,
                     "step_peak_bytes": step_peak,
                     "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                     "train_cache_hit_rate": None}
    out["runtime"] = runtime_info()
    if device.type == "cuda":
        out["runtime"]["cuda"] = {"device": torch.cuda.get_device_name(), "cuda": torch.version.cuda,
                                  "cudnn": torch.backends.cudnn.version(), "cudnn_benchmark": True, "tf32": args.tf32}
    return out


def print_human(r):
    print("%s (%s, %d params, %d threads, torch %s, %s, %s%s)" % (
        r["config"], r["model"], r["params"], r["threads"], r["version"], r["device"], r["dtype"],
        ", %d checkpointed segments" % r["checkpointing_segments"] if r["checkpointing"] else ""))
    if r["train"]:
        t = r["train"]
        print("  train      batch %4d: %9.1f images/s (min %.1f, max %.1f), %.2f ms/step"
              % (r["batch_size"], t["images_per_s"]["median"], t["images_per_s"]["min"], t["images_per_s"]["max"],
                 t["ms_per_step"]["median"]))
    if r["inference"]:
        t = r["inference"]
        print("  inference  batch %4d: %9.1f images/s (min %.1f, max %.1f), %.2f ms/batch"
              % (r["infer_batch"], t["images_per_s"]["median"], t["images_per_s"]["min"], t["images_per_s"]["max"],
                 t["ms_per_batch"]["median"]))
    if r["latency_b1_ms"]:
        print("  latency    batch    1: %.3f ms median, %.3f ms p90" % (r["latency_b1_ms"]["median"],
                                                                       r["latency_b1_ms"]["p90"]))
    mem = r["memory"]
    if mem["activation_bytes"] is not None:
        print("  activation memory %.1f MiB kept from forward to backward%s" % (
            mem["activation_bytes"] / 2**20, "" if mem["step_peak_bytes"] is None else
            ", step peak %.1f MiB above its start" % (mem["step_peak_bytes"] / 2**20)))
    blas = r["runtime"]["blas"]
    print("  peak RSS %.1f MiB; BLAS %s (%s)" % (r["memory"]["peak_rss_bytes"] / 2**20,
                                                ", ".join(blas["libraries"]) or "none",
                                                blas.get("openblas_core", "?")))


def main(argv):
    ap = argparse.ArgumentParser(prog="torch_bench.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("configs", nargs="+", metavar="CONFIG.yaml")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=0, help="default: data.batch_size")
    ap.add_argument("--infer-batch", type=int, default=256)
    ap.add_argument("--latency-iters", type=int, default=100, help="batch-1 forwards per repeat")
    ap.add_argument("--threads", default="", help="T or a list T1,T2 (default: the config's threads, else "
                    "OMP_NUM_THREADS, else torch's)")
    ap.add_argument("--init", action="append", default=[], metavar="FILE.safetensors",
                    help="initial weights (ingot bench --save-init); once per config")
    ap.add_argument("--set", action="append", default=[], metavar="key=value")
    ap.add_argument("--target-seconds", type=float, default=0.0,
                    help="sweep mode: about this long per timed block (--steps is then the maximum)")
    ap.add_argument("--parts", default=",".join(PARTS), help="which of train,inference,latency to run")
    ap.add_argument("--compile", action="store_true", help="measure torch.compile(model) (PyTorch 2.x), after its warm-up")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where model and data live (default cpu)")
    ap.add_argument("--amp", choices=("f32", "bf16"), default=None,
                    help="training forward and inference under torch.autocast(bfloat16), or plain f32 (default: "
                    "the config's train.amp.dtype, else f32)")
    ap.add_argument("--checkpoint-segments", type=int, default=None, metavar="N",
                    help="train through checkpoint_sequential(model, N, x, use_reentrant=False); 0 = off "
                    "(default: the config's train.checkpointing.segments, else 0)")
    ap.add_argument("--tf32", choices=sorted(TF32), default="default",
                    help="cuda: TF32 in f32 convolutions and matmuls: default (convolutions only, PyTorch's "
                    "default), off, on")
    args = ap.parse_args(argv)
    for name in ("warmup", "steps", "repeat", "latency_iters"):
        if getattr(args, name) < (0 if name == "warmup" else 1):
            raise BenchError("--%s %d is out of range" % (name.replace("_", "-"), getattr(args, name)))
    if not set(args.parts.split(",")) <= set(PARTS):
        raise BenchError("--parts %s: expected a comma list of %s" % (args.parts, ",".join(PARTS)))
    default = int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or torch.get_num_threads()
    try:
        thread_list = [int(t) for t in args.threads.split(",")] if args.threads else []
    except ValueError:
        raise BenchError("--threads %s: expected a number or a comma list" % args.threads)
    if args.init and len(args.init) != len(args.configs):
        raise BenchError("--init given %d times for %d configs; give it once per config"
                         % (len(args.init), len(args.configs)))
    for i, path in enumerate(args.configs):
        for t in thread_list or [load_config(path, args.set).get("threads") or default]:
            r = bench(path, args.init[i] if args.init else None, args, t)
            if args.json:
                print(json.dumps(r), flush=True)
            else:
                print_human(r)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("torch_bench.py: error: %s" % e, file=sys.stderr)
        sys.exit(e.exit_code)
