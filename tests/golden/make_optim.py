"""Golden optimizer trajectories and gradient clipping values from torch.optim / torch.nn.utils.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_optim.py
Writes tests/golden/data/optim_<case>.safetensors (f32, a few KB each). Each trajectory file holds
"init.<k>" (parameter k before the first step), "grad.<s>.<k>" (the gradient fed at step s; absent
when parameter k gets none at that step), "param.<s>.<k>" (parameter k after step s) and
"state.<k>.<name>" (torch's state after the last step); metadata "type" (sgd, adam, adamw),
"steps", "params" and "groups" (JSON: a list of {"params": [k...], option: value}).
optim_clip.safetensors holds gradients "grad.<k>", total norms "norm.<type>" (2, inf, 1) and the
clipped gradients "clipped.<k>" for max_norm 1 (2-norm).
"""
import json
import os

import torch

import st_io

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
STEPS = 10
SHAPES = [(3, 4), (4,), (2, 3)]

# name -> (type, groups: list of (param indices, options), {step: [params without grad]})
CASES = {
    "sgd": ("sgd", [([0, 1, 2], dict(lr=0.1))], {}),
    "sgd_momentum": ("sgd", [([0, 1, 2], dict(lr=0.05, momentum=0.9))], {0: [1], 4: [1]}),
    "sgd_nesterov_wd": ("sgd", [([0, 1, 2], dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2))], {}),
    "sgd_dampening": ("sgd", [([0, 1, 2], dict(lr=0.05, momentum=0.8, dampening=0.3))], {}),
    "sgd_groups": ("sgd", [([0, 2], dict(lr=0.1, momentum=0.9, weight_decay=1e-3)),
                           ([1], dict(lr=0.01, momentum=0.9, weight_decay=0.0))], {}),
    "adam": ("adam", [([0, 1, 2], dict(lr=1e-2))], {}),
    "adam_wd": ("adam", [([0, 1, 2], dict(lr=1e-2, weight_decay=0.1))], {}),
    "adamw": ("adamw", [([0, 1, 2], dict(lr=1e-2))], {2: [1], 5: [1]}),
    "adamw_groups": ("adamw", [([0, 2], dict(lr=2e-2, weight_decay=0.1)), ([1], dict(lr=1e-2, weight_decay=0.0))],
                     {}),
    "adam_amsgrad": ("adam", [([0, 1, 2], dict(lr=1e-2, amsgrad=True, betas=(0.8, 0.99), eps=1e-6))], {}),
    # lr x weight_decay 0.75 and 2: the decay's order and scale show plainly
    "adamw_large_wd": ("adamw", [([0, 2], dict(lr=0.5, weight_decay=1.5)), ([1], dict(lr=1.0, weight_decay=2.0))],
                       {}),
}

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}


def trajectory(name, seed):
    kind, groups, skips = CASES[name]
    gen = torch.Generator().manual_seed(seed)
    params = [torch.randn(s, generator=gen).requires_grad_() for s in SHAPES]
    out = {f"init.{k}": p.detach().clone() for k, p in enumerate(params)}
    torch_groups = [dict(params=[params[k] for k in ks], **opts) for ks, opts in groups]
    opt = OPTIMIZERS[kind](torch_groups, foreach=False)
    for s in range(STEPS):
        opt.zero_grad(set_to_none=True)
        for k, p in enumerate(params):
            g = torch.randn(p.shape, generator=gen)
            if k in skips.get(s, []):
                continue
            p.grad = g
            out[f"grad.{s}.{k}"] = g.clone()
        opt.step()
        for k, p in enumerate(params):
            out[f"param.{s}.{k}"] = p.detach().clone()
    for k, p in enumerate(params):
        for key, value in opt.state.get(p, {}).items():
            if torch.is_tensor(value):  # moments, momentum buffers; Adam's step as a 1-element f32
                out[f"state.{k}.{key}"] = value.detach().clone().float().reshape(value.shape or (1,))
    meta_groups = []
    for ks, opts in groups:
        g = {"params": ks}
        for key, value in opts.items():
            if key == "betas":
                g["beta1"], g["beta2"] = value
            else:
                g[key] = value
        meta_groups.append(g)
    meta = {"type": kind, "steps": STEPS, "params": len(params), "groups": json.dumps(meta_groups)}
    st_io.save_file(out, os.path.join(OUT, f"optim_{name}.safetensors"), meta)


def clipping(seed):
    gen = torch.Generator().manual_seed(seed)
    grads = [torch.randn(s, generator=gen) * 0.7 for s in SHAPES]
    out = {f"grad.{k}": g.clone() for k, g in enumerate(grads)}
    for label, norm_type in (("2", 2.0), ("inf", float("inf")), ("1", 1.0)):
        params = [torch.zeros(g.shape, requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        out[f"norm.{label}"] = torch.nn.utils.clip_grad_norm_(params, 1.0, norm_type=norm_type).reshape(1)
        if label == "2":
            for k, p in enumerate(params):
                out[f"clipped.{k}"] = p.grad.clone()
    st_io.save_file(out, os.path.join(OUT, "optim_clip.safetensors"), {"max_norm": 1.0})


def main():
    os.makedirs(OUT, exist_ok=True)
    for i, name in enumerate(CASES):
        trajectory(name, 1000 + i)
    clipping(7)
    print(f"wrote {len(CASES) + 1} files to {OUT}")


if __name__ == "__main__":
    main()
