"""PyTorch side of `bench/compare --compress`: the same trained model, compressed the PyTorch way.

    PYTHON bench/torch_compress.py CONFIG.yaml WEIGHTS.safetensors [--threads 2] [--calib-batches 32]
        [--latency-iters 200] [--infer-batch 256] [--infer-iters 10] [--data DIR]

Builds the torch.nn twin of CONFIG's model (tests/golden/make_nn.py), loads WEIGHTS (an Ingot
stage file, torch's state_dict names) and prints one JSON line per variant, each measured the way
`ingot run` measures its stage table (test accuracy on Fashion-MNIST normalised as Ingot does by
default: x / 255, mean 0.286, std 0.353;
bytes of torch.save(state_dict), median batch-1 latency, images/s at --infer-batch, eval mode under
inference_mode, --threads threads):
  f32                the model as loaded
  dynamic_int8       torch.ao.quantization.quantize_dynamic({nn.Linear}, qint8)
  static_int8        eager post-training static quantization (x86 engine): Conv-BN-ReLU and
                     Linear-ReLU fused, QuantStub / DeQuantStub around the model, the default x86
                     qconfig (histogram observers, per-channel weights), calibrated on
                     --calib-batches training batches of 128
  pruned_global80    torch.nn.utils.prune.global_unstructured L1 80% over every Conv2d / Linear
                     weight, made permanent (no fine-tuning: the speed and size of what it gives)
  pruned_ln50        prune.ln_structured(n=1, dim=0) 50% of every Conv2d / Linear but the last,
                     made permanent: masked filters, the same dense shapes
"""
import argparse
import copy
import gzip
import io
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.utils.prune as prune
import yaml
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "golden"))
import make_nn  # noqa: E402
import st_io  # noqa: E402
import torch_bench  # noqa: E402


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def fashion_mnist(folder, split, mean=0.286, std=0.353):
    """Images as Ingot's fashion_mnist dataset gives them: x / 255, then (x - mean) / std."""
    prefix = "train" if split == "train" else "t10k"
    x = idx(os.path.join(folder, prefix + "-images-idx3-ubyte.gz")).float().div_(255.0).sub_(mean).div_(std)
    x = x.unsqueeze(1)
    y = idx(os.path.join(folder, prefix + "-labels-idx1-ubyte.gz")).long()
    return x, y


def accuracy(model, x, y, batch=1000):
    correct = 0
    with torch.inference_mode():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct / len(x)


def size_bytes(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return len(buf.getvalue())


def timing(model, shape, batch, iters, warmup):
    x = torch.randn([batch] + list(shape))
    ms = []
    with torch.inference_mode():
        for _ in range(warmup):
            model(x)
        for _ in range(iters):
            t0 = time.perf_counter()
            model(x)
            ms.append(1000.0 * (time.perf_counter() - t0))
    return statistics.median(ms)


class Quantized(nn.Module):
    """QuantStub -> model -> DeQuantStub (eager static quantization's wrapper)."""

    def __init__(self, model):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.model = model
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.model(self.quant(x)))


def fuse_groups(model):
    """[['0', '1', '2'], ...]: Conv2d-BatchNorm2d[-ReLU] and Linear-ReLU runs of the Sequential."""
    names = [n for n, _ in model.named_children()]
    mods = [m for _, m in model.named_children()]
    groups, i = [], 0
    while i < len(mods):
        if isinstance(mods[i], nn.Conv2d) and i + 1 < len(mods) and isinstance(mods[i + 1], nn.BatchNorm2d):
            g = [names[i], names[i + 1]]
            if i + 2 < len(mods) and isinstance(mods[i + 2], nn.ReLU):
                g.append(names[i + 2])
            groups.append(g)
            i += len(g)
        elif isinstance(mods[i], nn.Linear) and i + 1 < len(mods) and isinstance(mods[i + 1], nn.ReLU):
            groups.append([names[i], names[i + 1]])
            i += 2
        else:
            i += 1
    return groups


def static_int8(model, x_train, batches):
    torch.backends.quantized.engine = "x86" if "x86" in torch.backends.quantized.supported_engines else "fbgemm"
    m = copy.deepcopy(model).eval()
    m = torch.ao.quantization.fuse_modules(m, fuse_groups(m))
    q = Quantized(m).eval()
    q.qconfig = torch.ao.quantization.get_default_qconfig(torch.backends.quantized.engine)
    torch.ao.quantization.prepare(q, inplace=True)
    with torch.inference_mode():
        for i in range(batches):
            q(x_train[i * 128:(i + 1) * 128])
    torch.ao.quantization.convert(q, inplace=True)
    return q


def prunable(model):
    return [(m, "weight") for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


def pruned_global(model, amount):
    m = copy.deepcopy(model)
    prune.global_unstructured(prunable(m), pruning_method=prune.L1Unstructured, amount=amount)
    for mod, name in prunable(m):
        prune.remove(mod, name)
    return m


def pruned_ln(model, amount):
    m = copy.deepcopy(model)
    layers = prunable(m)[:-1]
    for mod, name in layers:
        prune.ln_structured(mod, name, amount=amount, n=1, dim=0)
        prune.remove(mod, name)
    return m


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("config")
    p.add_argument("weights")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--calib-batches", type=int, default=32)
    p.add_argument("--latency-iters", type=int, default=200)
    p.add_argument("--infer-batch", type=int, default=256)
    p.add_argument("--infer-iters", type=int, default=10)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--variants", default="f32,dynamic_int8,static_int8,pruned_global80,pruned_ln50")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    cfg = yaml.safe_load(open(a.config))
    spec, _ = torch_bench.model_spec(cfg, a.config)
    model = make_nn.torch_model(spec)
    tensors, _ = st_io.load_file(a.weights)
    model.load_state_dict({k: torch.tensor(v) if not isinstance(v, torch.Tensor) else v for k, v in tensors.items()},
                          strict=True)
    model.eval()
    x_test, y_test = fashion_mnist(a.data, "test")
    x_train, _ = fashion_mnist(a.data, "train")
    make = {"f32": lambda: model,
            "dynamic_int8": lambda: torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {nn.Linear},
                                                                           dtype=torch.qint8),
            "static_int8": lambda: static_int8(model, x_train, a.calib_batches),
            "pruned_global80": lambda: pruned_global(model, 0.8),
            "pruned_ln50": lambda: pruned_ln(model, 0.5)}
    shape = spec["input_shape"]
    for name in a.variants.split(","):
        m = make[name]().eval()
        row = {"variant": name, "torch": torch.__version__, "threads": a.threads,
               "accuracy": accuracy(m, x_test, y_test), "bytes": size_bytes(m),
               "latency_b1_ms": timing(m, shape, 1, a.latency_iters, 10),
               "images_per_s": a.infer_batch / timing(m, shape, a.infer_batch, a.infer_iters, 2) * 1000.0,
               "batch": a.infer_batch}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
