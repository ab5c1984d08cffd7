"""PyTorch's side of bench_cuda_ops and bench_cuda_conv: the same ops, shapes and names, timed on
the GPU the same way (a warm-up call, then batches of back-to-back calls each ending with
torch.cuda.synchronize(); time per call = all batches' time / all calls). Prints one JSON object:

    {"framework": "pytorch", "version", "cuda", "cudnn", "device", "tf32", "results":
        {NAME: {"ms": per call, "GB/s" or "TFLOP/s": rate} or {"error": text}}}

    python3 bench/torch_gpu_ops.py [--min-time S] [--only SUBSTRING]

NAMEs are the Google Benchmark names without "BM_" (softmax/f32/16384x4096, conv/fwd/f16/nhwc,
...), so bench/compare --device cuda joins the two. Convolutions run with cudnn.benchmark on;
f32 without TF32 (as bench_cuda_conv pins Ingot's side). An op that fails is reported as an error and
the others still run. Without a CUDA device it exits 3. `--device cpu --smoke` runs tiny shapes
on the CPU to test this script only (its figures mean nothing).
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

ROWS, COLS = 16384, 4096
SUM_ELEMS = 256 << 20  # 1 GiB of f32
TINY_CALLS = 10000
CONV = dict(n=32, c=64, k=64, hw=56, r=3)
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def per_call_seconds(fn, sync, min_time, calls=0):
    """Warm-up call, then batches of `calls` calls (0: about 20 ms a batch, 1 to 64), at least 3
    batches and min_time seconds; returns the seconds per call."""
    fn()
    sync()
    if calls <= 0:
        t0 = time.perf_counter()
        fn()
        sync()
        calls = int(min(64, max(1, math.ceil(0.02 / max(time.perf_counter() - t0, 1e-7)))))
    total, n, batches = 0.0, 0, 0
    while batches < 3 or total < min_time:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        total += time.perf_counter() - t0
        n += calls
        batches += 1
    return total / n


def cases(smoke):
    """(name, make) pairs; make(device) returns (fn, work per call, unit, scale, calls)."""
    rows, cols = (64, 128) if smoke else (ROWS, COLS)
    sum_elems = (1 << 16) if smoke else SUM_ELEMS
    shape = "%dx%d" % (ROWS, COLS)
    out = []

    def softmax(dt):
        def make(dev):
            x = torch.rand(rows, cols, device=dev, dtype=DTYPES[dt]) * 2 - 1
            return (lambda: torch.softmax(x, 1)), 2.0 * x.numel() * x.element_size(), "GB/s", 1e9, 0
        return make

    def layer_norm(dt):
        def make(dev):
            x = torch.rand(rows, cols, device=dev, dtype=DTYPES[dt]) * 2 - 1
            w, b = torch.rand(cols, device=dev, dtype=DTYPES[dt]), torch.rand(cols, device=dev, dtype=DTYPES[dt])
            return (lambda: F.layer_norm(x, (cols,), w, b)), 2.0 * x.numel() * x.element_size(), "GB/s", 1e9, 0
        return make

    for dt in ("f32", "bf16"):
        out.append(("softmax/%s/%s" % (dt, shape), softmax(dt)))
        out.append(("layer_norm/%s/%s" % (dt, shape), layer_norm(dt)))

    def total(dev):
        x = torch.rand(sum_elems, device=dev)
        return (lambda: x.sum()), 4.0 * sum_elems, "GB/s", 1e9, 0
    out.append(("sum/f32/1GiB", total))

    def tiny(dev):
        a, b = torch.rand(1, device=dev), torch.rand(1, device=dev)
        return (lambda: torch.add(a, b)), 0.0, "", 1.0, 100 if smoke else TINY_CALLS
    out.append(("tiny_add/f32/1", tiny))

    c = dict(CONV, n=2, c=4, k=4, hw=8) if smoke else CONV
    flop = 2.0 * c["n"] * c["k"] * c["hw"] ** 2 * c["c"] * c["r"] ** 2

    def conv(direction, dt, nhwc):
        def make(dev):
            fmt = torch.channels_last if nhwc else torch.contiguous_format
            t = DTYPES[dt]
            x = torch.rand(c["n"], c["c"], c["hw"], c["hw"], device=dev, dtype=t).to(memory_format=fmt)
            w = torch.rand(c["k"], c["c"], c["r"], c["r"], device=dev, dtype=t).to(memory_format=fmt)
            gy = torch.rand(c["n"], c["k"], c["hw"], c["hw"], device=dev, dtype=t).to(memory_format=fmt)
            if direction == "fwd":
                fn = lambda: F.conv2d(x, w, padding=1)  # noqa: E731
            else:
                mask = [direction == "bwd_data", direction == "bwd_weight", False]
                fn = lambda: torch.ops.aten.convolution_backward(  # noqa: E731
                    gy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, mask)
            return fn, flop, "TFLOP/s", 1e12, 0
        return make

    for nhwc in (False, True):
        for dt in ("f32", "f16"):
            for direction in ("fwd", "bwd_data", "bwd_weight"):
                out.append(("conv/%s/%s/%s" % (direction, dt, "nhwc" if nhwc else "nchw"), conv(direction, dt, nhwc)))
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="torch_gpu_ops.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-time", type=float, default=0.3, help="seconds of timed batches per op (default 0.3)")
    ap.add_argument("--only", default="", help="run the ops whose name contains this")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, for testing this script (with --device cpu)")
    args = ap.parse_args(argv)
    if args.device == "cpu" and not args.smoke:
        ap.error("--device cpu is for --smoke only: these are GPU figures")
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("torch_gpu_ops.py: error: %s: torch %s sees no CUDA device (CUDA build: %s); run it with a python "
                  "whose PyTorch has CUDA on a machine with an NVIDIA GPU"
                  % (sys.executable, torch.__version__, torch.version.cuda), file=sys.stderr)
            return 3
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    results = {}
    with torch.inference_mode():
        for name, make in cases(args.smoke):
            if args.only not in name:
                continue
            try:
                fn, work, unit, scale, calls = make(args.device)
                s = per_call_seconds(fn, sync, 0.0 if args.smoke else args.min_time, calls)
                results[name] = {"ms": 1e3 * s}
                if work:
                    results[name][unit] = work / scale / s
            except (RuntimeError, NotImplementedError) as e:
                results[name] = {"error": str(e).splitlines()[0][:200]}
            if args.device == "cuda":
                torch.cuda.empty_cache()
    cuda = args.device == "cuda"
    print(json.dumps({
        "framework": "pytorch", "version": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "device": torch.cuda.get_device_name() if cuda else "cpu", "tf32": False, "smoke": args.smoke,
        "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
