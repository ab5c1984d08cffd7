"""Golden quantize / dequantize values from torch.quantize_per_tensor / quantize_per_channel.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_quantize.py
Writes tests/golden/data/quantize.safetensors. For each case NAME: "NAME.x" (f32 input),
"NAME.scale" (f32 [C]) and "NAME.zero_point" (i32 [C]) with C = 1 per tensor, "NAME.q" (the
quantized tensor's int_repr, u8 or i8), "NAME.deq" (torch.dequantize of it, f32); the narrowed-range
cases hold "NAME.fq" (torch.fake_quantize_*: quantized to [quant_min, quant_max] and dequantized)
instead of q and deq. Metadata "cases" is a JSON list of {name, dtype, axis (-1 = per tensor),
quant_min, quant_max}. Scales are f32 values (torch keeps them as double). Inputs hold exact .5
ties of x * (1 / scale) and fbgemm's example where x / scale would round the other way.
"""
import json
import os

import torch

import st_io

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "quantize.safetensors")

QTYPES = {"u8": torch.quint8, "i8": torch.qint8}
RANGES = {"u8": (0, 255), "i8": (-128, 127)}


def f32(v):
    return torch.tensor(v, dtype=torch.float32).item()


def inputs(shape, scales, axis, gen):
    """Normal values spread over about +-150 quantization steps, with every fifth element an exact
    .5 tie of x * (1 / scale) (its channel's scale) and every fifth + 2 a near tie."""
    x = torch.randn(shape, generator=gen) * 60.0
    view = x.movedim(axis, 0) if axis >= 0 else x.reshape(1, -1)
    for c in range(view.shape[0]):
        s = scales[c if len(scales) > 1 else 0]
        flat = view[c].reshape(-1)
        inv = f32(1.0 / s)
        for i in range(flat.numel()):
            flat[i] = flat[i] * s
            k = float(i % 23 - 11)
            if i % 5 == 0:
                flat[i] = (k + 0.5) * s  # exact when s is a power of two
            elif i % 5 == 2:
                flat[i] = f32((k + 0.5) / inv)  # lands on or beside a tie after * inv
        view[c] = flat.reshape(view[c].shape)
    return x.contiguous()


def quantize_case(out, cases, name, dtype, shape, scales, zero_points, axis, gen, qrange=None):
    scales = [f32(s) for s in scales]
    x = inputs(shape, scales, axis, gen)
    lo, hi = qrange if qrange else RANGES[dtype]
    if qrange:
        if axis < 0:
            out[name + ".fq"] = torch.fake_quantize_per_tensor_affine(x, scales[0], zero_points[0], lo, hi)
        else:
            out[name + ".fq"] = torch.fake_quantize_per_channel_affine(
                x, torch.tensor(scales), torch.tensor(zero_points, dtype=torch.int32), axis, lo, hi)
    elif axis < 0:
        q = torch.quantize_per_tensor(x, scales[0], zero_points[0], QTYPES[dtype])
        out[name + ".q"], out[name + ".deq"] = q.int_repr(), torch.dequantize(q)
    else:
        q = torch.quantize_per_channel(x, torch.tensor(scales, dtype=torch.float64),
                                       torch.tensor(zero_points, dtype=torch.int64), axis, QTYPES[dtype])
        out[name + ".q"], out[name + ".deq"] = q.int_repr(), torch.dequantize(q)
    out[name + ".x"] = x
    out[name + ".scale"] = torch.tensor(scales, dtype=torch.float32)
    out[name + ".zero_point"] = torch.tensor(zero_points, dtype=torch.int32)
    cases.append(dict(name=name, dtype=dtype, axis=axis, quant_min=lo, quant_max=hi))


def main():
    gen = torch.Generator().manual_seed(14)
    out, cases = {}, []
    quantize_case(out, cases, "u8_tensor_pow2", "u8", (6, 31), [0.03125], [128], -1, gen)
    quantize_case(out, cases, "u8_tensor", "u8", (6, 31), [0.0173], [97], -1, gen)
    quantize_case(out, cases, "i8_tensor", "i8", (5, 29), [0.0411], [-5], -1, gen)
    quantize_case(out, cases, "i8_tensor_pow2", "i8", (5, 29), [0.0625], [0], -1, gen)
    quantize_case(out, cases, "i8_channel0", "i8", (4, 37), [0.0625, 0.0137, 0.25, 0.0091], [0, 1, -3, 2], 0, gen)
    quantize_case(out, cases, "u8_channel1", "u8", (2, 3, 5, 7), [0.0078125, 0.0311, 0.125], [128, 120, 0], 1, gen)
    quantize_case(out, cases, "u8_tensor_7bit", "u8", (6, 31), [0.0173], [60], -1, gen, qrange=(0, 127))
    quantize_case(out, cases, "i8_channel0_symmetric", "i8", (3, 41), [0.0123, 0.03125, 0.0071], [0, 0, 0], 0, gen,
                  qrange=(-127, 127))
    # fbgemm's example: 0.273939937 * (1 / 0.00214854861) is 127.5 in f32 (-> 128), / gives 127.49999
    x = torch.tensor([0.273939937, -0.1, 0.0, 1.0], dtype=torch.float32)
    s = f32(0.00214854861)
    q = torch.quantize_per_tensor(x, s, -10, torch.qint8)
    out["fbgemm_example.x"], out["fbgemm_example.q"], out["fbgemm_example.deq"] = x, q.int_repr(), torch.dequantize(q)
    out["fbgemm_example.scale"] = torch.tensor([s], dtype=torch.float32)
    out["fbgemm_example.zero_point"] = torch.tensor([-10], dtype=torch.int32)
    cases.append(dict(name="fbgemm_example", dtype="i8", axis=-1, quant_min=-128, quant_max=127))
    st_io.save_file(out, OUT, metadata={"cases": json.dumps(cases), "torch": torch.__version__})
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
