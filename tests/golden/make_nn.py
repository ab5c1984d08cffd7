"""Records torch.nn module outputs and gradients for tests/nn/test_golden_nn.cpp.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_nn.py
Writes tests/golden/data/nn_modules.safetensors (single layers) and nn_presets.safetensors (the
mlp / simple_cnn / resnet presets and BasicBlocks). For each case "<case>":
  <case>.state.<name>       the module's state_dict before the step (names are torch's; the C++
                            test loads them by name, strict, so this also checks Ingot's names)
  <case>.input              the input (float32, or int64 indices for Embedding)
  <case>.output             module(input) in the recorded mode
  <case>.grad_output        the upstream gradient fed to output.backward()
  <case>.grad_input         d/d input (float inputs only)
  <case>.grad.<name>        d/d each parameter
  <case>.after.<name>       buffers after the step (BatchNorm running stats, num_batches_tracked)
Metadata "<case>.mode" is "train" or "eval". Parameters are randomised (not torch's init) so that
every gradient is non-trivial; BatchNorm running stats too in eval cases.

    /usr/bin/python3 tests/golden/make_nn.py --check-export FILE
is the torch side of tests/nn/test_torch_export.cpp: FILE holds, per model "<m>", Ingot's
"<m>.state.<name>", "<m>.input" and "<m>.logits" (eval mode) with metadata "<m>.spec" (the YAML
model section as JSON). It builds the equivalent torch.nn model, loads the state dict (strict),
and exits 1 unless torch's logits match within 1e-4 + 1e-3 |b|.
"""
import json
import os
import sys
from collections import OrderedDict

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_io import save_file  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
torch.manual_seed(20261202)


class BasicBlock(nn.Module):
    """CIFAR ResNet block with the option-B shortcut (kuangliu/pytorch-cifar naming)."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.shortcut(x))


def resnet(depth, width, cin, classes):
    n = (depth - 2) // 6
    layers = [("conv1", nn.Conv2d(cin, width, 3, 1, 1, bias=False)), ("bn1", nn.BatchNorm2d(width)),
              ("relu", nn.ReLU())]
    c = width
    for stage in range(3):
        out = width << stage
        blocks = []
        for b in range(n):
            blocks.append(BasicBlock(c, out, 2 if b == 0 and stage > 0 else 1))
            c = out
        layers.append(("layer%d" % (stage + 1), nn.Sequential(*blocks)))
    layers += [("pool", nn.AdaptiveAvgPool2d(1)), ("flatten", nn.Flatten()), ("fc", nn.Linear(c, classes))]
    return nn.Sequential(OrderedDict(layers))


def simple_cnn(cin, hw, ch, hidden, classes, p):
    return nn.Sequential(
        nn.Conv2d(cin, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(ch, 2 * ch, 3, padding=1, bias=False), nn.BatchNorm2d(2 * ch), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(2 * ch * (hw // 4) ** 2, hidden), nn.ReLU(), nn.Dropout(p), nn.Linear(hidden, classes))


def randomise(m, running_stats):
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(torch.randn_like(p) * 0.5 + (1.0 if name.endswith("weight") and p.dim() == 1 else 0.0))
        if running_stats:
            for name, b in m.named_buffers():
                if name.endswith("running_mean"):
                    b.copy_(torch.randn_like(b) * 0.3)
                elif name.endswith("running_var"):
                    b.copy_(torch.rand_like(b) + 0.5)
                elif name.endswith("num_batches_tracked"):
                    b.fill_(7)


def record(out, meta, case, module, x, mode="train", randomise_params=True):
    module.train(mode == "train")
    if randomise_params:
        randomise(module, mode == "eval")
    for k, v in module.state_dict().items():
        out["%s.state.%s" % (case, k)] = v.clone()
    xin = x.clone()
    if xin.is_floating_point():
        xin.requires_grad_(True)
    y = module(xin)
    g = torch.randn_like(y)
    y.backward(g)
    out[case + ".input"] = x
    out[case + ".output"] = y.detach()
    out[case + ".grad_output"] = g
    if xin.is_floating_point():
        out[case + ".grad_input"] = xin.grad
    for k, p in module.named_parameters():
        out["%s.grad.%s" % (case, k)] = p.grad
    for k, b in module.named_buffers():
        out["%s.after.%s" % (case, k)] = b.clone()
    meta[case + ".mode"] = mode


def modules():
    out, meta = {}, {}
    r = torch.randn
    record(out, meta, "linear", nn.Linear(5, 3), r(4, 5))
    record(out, meta, "linear_3d_nobias", nn.Linear(5, 3, bias=False), r(2, 3, 5))
    record(out, meta, "conv_p1", nn.Conv2d(3, 4, 3, padding=1), r(2, 3, 6, 6))
    record(out, meta, "conv_s2_g2", nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), r(2, 4, 7, 7))
    record(out, meta, "conv_d2_nobias", nn.Conv2d(2, 2, 3, padding=2, dilation=2, bias=False), r(1, 2, 6, 6))
    record(out, meta, "bn_train", nn.BatchNorm2d(3), r(4, 3, 5, 5) * 2 + 1)
    record(out, meta, "bn_train_m03", nn.BatchNorm2d(3, momentum=0.3), r(2, 3, 4, 4))
    record(out, meta, "bn_eval", nn.BatchNorm2d(3), r(4, 3, 5, 5), mode="eval")
    record(out, meta, "layernorm", nn.LayerNorm(6), r(3, 4, 6))
    record(out, meta, "maxpool_k3s2p1", nn.MaxPool2d(3, 2, 1), r(2, 3, 7, 7))
    record(out, meta, "maxpool_ceil", nn.MaxPool2d(2, 2, ceil_mode=True), r(1, 2, 7, 7))
    record(out, meta, "avgpool_k3s2p1_nopad", nn.AvgPool2d(3, 2, 1, count_include_pad=False), r(2, 3, 7, 7))
    record(out, meta, "avgpool_k2", nn.AvgPool2d(2), r(1, 2, 6, 6))
    record(out, meta, "adaptive_3", nn.AdaptiveAvgPool2d(3), r(2, 2, 7, 7))
    record(out, meta, "adaptive_1", nn.AdaptiveAvgPool2d(1), r(2, 3, 5, 4))
    record(out, meta, "embedding", nn.Embedding(10, 4), torch.tensor([[1, 3, 3], [9, 0, 1]]))
    record(out, meta, "relu", nn.ReLU(), r(3, 7))
    record(out, meta, "gelu", nn.GELU(), r(3, 7) * 2)
    record(out, meta, "sigmoid", nn.Sigmoid(), r(3, 7) * 2)
    record(out, meta, "tanh", nn.Tanh(), r(3, 7))
    record(out, meta, "flatten", nn.Flatten(), r(2, 3, 4, 5))
    record(out, meta, "dropout_eval", nn.Dropout(0.5), r(3, 7), mode="eval")
    save_file(out, os.path.join(DATA, "nn_modules.safetensors"), meta)


def presets():
    out, meta = {}, {}
    r = torch.randn
    record(out, meta, "block_identity", BasicBlock(4, 4, 1), r(2, 4, 6, 6))
    record(out, meta, "block_projection", BasicBlock(4, 8, 2), r(2, 4, 6, 6))
    record(out, meta, "block_projection_eval", BasicBlock(4, 8, 2), r(2, 4, 6, 6), mode="eval")
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(12, 10), nn.GELU(), nn.Linear(10, 8), nn.GELU(), nn.Linear(8, 4))
    record(out, meta, "mlp", mlp, r(3, 3, 4))
    record(out, meta, "simple_cnn", simple_cnn(1, 8, 4, 16, 5, 0.0), r(2, 1, 8, 8))
    record(out, meta, "resnet8", resnet(8, 4, 3, 3), r(2, 3, 8, 8))
    record(out, meta, "resnet8_eval", resnet(8, 4, 3, 3), r(2, 3, 8, 8), mode="eval")
    save_file(out, os.path.join(DATA, "nn_presets.safetensors"), meta)


def torch_model(spec):
    """The torch.nn model of a preset spec (the same structure make_mlp / make_simple_cnn /
    make_resnet build)."""
    kind = spec["preset"]
    if kind == "mlp":
        act = {"relu": nn.ReLU, "gelu": nn.GELU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}[spec.get("activation", "relu")]
        sizes, p = spec["sizes"], spec.get("dropout", 0.0)
        layers = [nn.Flatten()]
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i + 2 < len(sizes):
                layers.append(act())
                if p > 0:
                    layers.append(nn.Dropout(p))
        return nn.Sequential(*layers)
    c, h, _ = spec.get("input_shape", [1, 28, 28] if kind == "simple_cnn" else [3, 32, 32])
    if kind == "simple_cnn":
        return simple_cnn(c, h, spec.get("width", 32), spec.get("hidden", 128), spec.get("classes", 10),
                          spec.get("dropout", 0.25))
    return resnet(spec.get("depth", 20), spec.get("width", 16), c, spec.get("classes", 10))


def check_export(path):
    from st_io import load_file
    tensors, meta = load_file(path)
    ok = True
    for key, text in sorted(meta.items()):
        if not key.endswith(".spec"):
            continue
        name = key[:-len(".spec")]
        model = torch_model(json.loads(text))
        prefix = name + ".state."
        state = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
        model.load_state_dict(state, strict=True)
        model.eval()
        with torch.no_grad():
            logits = model(tensors[name + ".input"])
        want = tensors[name + ".logits"]
        excess = ((logits - want).abs() - (1e-4 + 1e-3 * want.abs())).max().item()
        print("%s: max |torch - ingot| = %.3g (%s)" % (name, (logits - want).abs().max().item(),
                                                      "ok" if excess <= 0 else "MISMATCH"))
        ok = ok and excess <= 0
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check-export":
        sys.exit(check_export(sys.argv[2]))
    os.makedirs(DATA, exist_ok=True)
    modules()
    presets()
