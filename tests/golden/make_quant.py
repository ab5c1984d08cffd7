"""Records torch.ao.quantization results for tests/compress/test_quant_*.cpp.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_quant.py
Writes tests/golden/data/quant.safetensors:
  choose.minmax            [N, 2] (min, max) pairs (float32)
  choose.scale.rr<0|1>     torch._choose_qparams_per_tensor's scale (fbgemm's
  choose.zp.rr<0|1>        ChooseQuantizationParams over u8, reduce_range off / on), as float32 / int32
  obs.batch<i>             calibration batches fed to the observers, in order
  obs.<name>.scale / .zp   calculate_qparams() after all batches, for <name>:
                           minmax, minmax_rr (MinMaxObserver, quint8 affine, reduce_range off / on),
                           moving_average (MovingAverageMinMaxObserver, averaging_constant 0.01)
  hist.<c>.histogram       torch's HistogramObserver (2048 bins) after one batch of case <c>: its
  hist.<c>.minmax          histogram and [min, max], and .range / .scale / .zp: the range its L2
                           search keeps and the parameters calculate_qparams() returns (cases:
                           normal 100k and 400k values with outliers at -8 and 8, their ReLU)
  perchannel.weight        a [12, 20] weight; .scale / .zp / .int8: PerChannelMinMaxObserver
                           (qint8, per_channel_symmetric) and torch.quantize_per_channel's int_repr
  dyn.state.<name>         the f32 MLP 64-32-10 (Linear, ReLU, Linear) state_dict
  dyn.input                [16, 64] input
  dyn.<i>.weight_int8      quantize_dynamic(model, {nn.Linear: per_channel_dynamic_qconfig},
  dyn.<i>.weight_scale     dtype=torch.qint8): each DynamicQuantizedLinear's int8 weight and
                           per-channel scales (float32; torch keeps them as float64 of f32 values)
  dyn.output               the dynamically quantized model's output (torch's linear_dynamic with
                           reduce_range=True, activations quantized per batch)
  dyn.output_f32           the f32 model's output
"""
import os
import sys

import torch
from torch import nn
from torch.ao.quantization import (HistogramObserver, MinMaxObserver, MovingAverageMinMaxObserver,
                                   PerChannelMinMaxObserver, per_channel_dynamic_qconfig, quantize_dynamic)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_io import save_file  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
torch.manual_seed(20261214)
out = {}

# fbgemm's ChooseQuantizationParams (the dynamic ops' per-batch activation parameters), including
# the corner cases: all-positive, all-negative, zero-width, tiny (scale cut off at 6.1e-5), huge.
pairs = [(-0.3, 2.5), (0.0, 1.0), (0.1, 7.3), (-4.0, -0.5), (0.0, 0.0), (1e-6, 2e-6), (-1e-5, 3e-5),
         (-123.4, 56.7), (-1.0, 1.0), (-0.731, 0.269), (2.0, 2.0), (-3e4, 1e4)]
pairs += [tuple(sorted((torch.randn(2) * 3).tolist())) for _ in range(20)]
minmax = torch.tensor(pairs, dtype=torch.float32)
out["choose.minmax"] = minmax
for rr in (0, 1):
    scales, zps = [], []
    for lo, hi in minmax.tolist():
        s, z = torch._choose_qparams_per_tensor(torch.tensor([lo, hi], dtype=torch.float32), bool(rr))
        scales.append(s)
        zps.append(z)
    out["choose.scale.rr%d" % rr] = torch.tensor(scales, dtype=torch.float32)
    out["choose.zp.rr%d" % rr] = torch.tensor(zps, dtype=torch.int32)

# Observers over a few batches of different ranges.
batches = [torch.randn(8, 20) * s + o for s, o in ((1.0, 0.5), (3.0, -1.0), (0.5, 2.0), (2.0, 0.0))]
for i, b in enumerate(batches):
    out["obs.batch%d" % i] = b
observers = {
    "minmax": MinMaxObserver(dtype=torch.quint8),
    "minmax_rr": MinMaxObserver(dtype=torch.quint8, reduce_range=True),
    "moving_average": MovingAverageMinMaxObserver(averaging_constant=0.01, dtype=torch.quint8),
}
for name, obs in observers.items():
    for b in batches:
        obs(b)
    s, z = obs.calculate_qparams()
    out["obs.%s.scale" % name] = s.to(torch.float32)
    out["obs.%s.zp" % name] = z.to(torch.int32)

# The histogram observer's L2 search, on torch's own histograms (the data itself is too large to
# keep): integer end points, as torch 1.13 builds the first histogram over [int(min), int(max)].
for case, (n, relu) in enumerate(((100000, False), (400000, False), (400000, True))):
    x = torch.randn(n)
    x[0], x[1] = -8.0, 8.0
    if relu:
        x = torch.relu(x)
    h = HistogramObserver()
    h(x)
    lo, hi = h._non_linear_param_search()
    s, z = h.calculate_qparams()
    out["hist.%d.histogram" % case] = h.histogram.clone()
    out["hist.%d.minmax" % case] = torch.stack([h.min_val, h.max_val]).to(torch.float32)
    out["hist.%d.range" % case] = torch.stack([lo, hi]).to(torch.float32)
    out["hist.%d.scale" % case] = s.to(torch.float32)
    out["hist.%d.zp" % case] = z.to(torch.int32)

w = torch.randn(12, 20) * torch.linspace(0.01, 2.0, 12)[:, None]
w[3] = w[3].abs()  # a channel without negative values
pc = PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
pc(w)
s, z = pc.calculate_qparams()
out["perchannel.weight"] = w
out["perchannel.scale"] = s.to(torch.float32)
out["perchannel.zp"] = z.to(torch.int32)
out["perchannel.int8"] = torch.quantize_per_channel(w, s.double(), z, 0, torch.qint8).int_repr()

# Dynamic quantization of a small MLP, as torch's eager API does it.
model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).eval()
for name, t in model.state_dict().items():
    out["dyn.state." + name] = t.clone()
x = torch.randn(16, 64) * 2.0
x[0] = x[0].abs()  # every row has its own range, but the whole batch shares one set of parameters
qmodel = quantize_dynamic(model, {nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
for i in (0, 2):
    qw = qmodel[i].weight()
    out["dyn.%d.weight_int8" % i] = qw.int_repr()
    out["dyn.%d.weight_scale" % i] = qw.q_per_channel_scales().to(torch.float32)
with torch.no_grad():
    out["dyn.input"] = x
    out["dyn.output"] = qmodel(x)
    out["dyn.output_f32"] = model(x)

os.makedirs(DATA, exist_ok=True)
save_file(out, os.path.join(DATA, "quant.safetensors"), {"torch": torch.__version__})
print("wrote", os.path.join(DATA, "quant.safetensors"))
