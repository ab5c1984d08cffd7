"""Records torch.nn.functional.scaled_dot_product_attention outputs and gradients for
tests/core/ops/test_attention_golden.cpp.

Debian's torch 1.13 has no scaled_dot_product_attention, so this one fixture is made with a
PyTorch 2.x (the bench venv), by hand:
    build/torch-venv/bin/python tests/golden/make_attention.py
Writes tests/golden/data/attention.safetensors: for each case "<case>.q", ".k", ".v", optional
".mask" (bool: true = attend, or additive in the inputs' dtype), ".grad_out", and torch's results
".out", ".grad_q", ".grad_k", ".grad_v"; the metadata holds each case's options as JSON
(causal: "none" / "upper_left" (torch's is_causal) / "lower_right", scale or null). Cases in
float32 and bfloat16; odd sequence lengths and head sizes; every query sees at least one key.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_io import save_file  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
gen = torch.Generator().manual_seed(2718)


def randn(*shape):
    return torch.randn(*shape, generator=gen)


def lower_right(tq, tk):
    """Query i sees keys j <= i + tk - tq (torch's causal_lower_right) as a bool mask."""
    i = torch.arange(tq).unsqueeze(1)
    j = torch.arange(tk).unsqueeze(0)
    return j <= i + (tk - tq)


CASES = [
    # name, B, H, Tq, Tk, D, Dv, causal, mask kind, scale
    ("plain odd", 2, 3, 7, 7, 5, 5, "none", None, None),
    ("causal", 2, 2, 9, 9, 8, 8, "upper_left", None, None),
    ("causal fewer keys", 1, 2, 6, 4, 8, 8, "upper_left", None, None),
    ("lower right", 1, 3, 3, 11, 6, 4, "lower_right", None, None),
    ("padding mask", 3, 2, 5, 6, 4, 4, "none", "bool_padding", None),
    ("additive mask", 2, 2, 5, 7, 3, 6, "none", "additive", 0.3),
    ("bool mask full", 1, 2, 8, 8, 16, 16, "none", "bool_full", None),
    ("long", 1, 2, 67, 67, 32, 32, "upper_left", None, None),
]


def make_mask(kind, b, h, tq, tk, dtype):
    if kind is None:
        return None
    if kind == "bool_padding":  # [B, 1, 1, Tk]: the last keys of each row are padding
        keep = torch.ones(b, 1, 1, tk, dtype=torch.bool)
        for r in range(b):
            keep[r, ..., tk - r:] = False  # row r loses its last r keys
        return keep
    if kind == "bool_full":  # [B, H, Tq, Tk], each row keeps its diagonal
        keep = torch.rand(b, h, tq, tk, generator=gen) > 0.4
        keep |= torch.eye(tq, tk, dtype=torch.bool)
        return keep
    if kind == "additive":  # [1, 1, Tq, Tk]
        return (randn(1, 1, tq, tk) * 2.0).to(dtype)
    raise ValueError(kind)


def main():
    tensors, meta = {}, {}
    for dtype, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for name, b, h, tq, tk, d, dv, causal, mask_kind, scale in CASES:
            key = f"{name} {tag}"
            q = randn(b, h, tq, d).to(dtype).requires_grad_(True)
            k = randn(b, h, tk, d).to(dtype).requires_grad_(True)
            v = randn(b, h, tk, dv).to(dtype).requires_grad_(True)
            mask = make_mask(mask_kind, b, h, tq, tk, dtype)
            attn_mask, is_causal = mask, causal == "upper_left"
            if causal == "lower_right":
                attn_mask = lower_right(tq, tk)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)
            grad_out = randn(*out.shape).to(dtype)
            out.backward(grad_out)
            t = {"q": q, "k": k, "v": v, "grad_out": grad_out, "out": out, "grad_q": q.grad, "grad_k": k.grad,
                 "grad_v": v.grad}
            if mask is not None:
                t["mask"] = mask
            for n, x in t.items():
                tensors[f"{key}.{n}"] = x.detach()
            meta[key] = json.dumps({"causal": causal, "scale": scale, "dtype": tag})
    meta["torch"] = torch.__version__
    save_file(tensors, os.path.join(DATA, "attention.safetensors"), metadata=meta)
    print(f"wrote {len(meta) - 1} cases with torch {torch.__version__}")


if __name__ == "__main__":
    main()
