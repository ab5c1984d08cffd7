"""Records torch loss values and input gradients for tests/train_math/test_loss_golden.cpp.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_losses.py
Writes tests/golden/data/loss_cases.json (each case: loss function and options) and
tests/golden/data/loss_tensors.safetensors ("<case>.input", ".target", optional ".weight",
".pos_weight", ".grad_output" for reduction none, and the results ".loss", ".grad_input").
All tensors are float32 (targets of cross_entropy / nll_loss int64); the gradient is torch
autograd's d(loss)/d(input), with loss.backward(grad_output) when the loss is not a scalar.
"""
import contextlib
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_io import save_file  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
gen = torch.Generator().manual_seed(1234)


def randn(*shape, scale=1.0):
    return torch.randn(*shape, generator=gen) * scale


def classes(n, shape):
    return torch.randint(0, n, shape, generator=gen)


def run(fn, opts, inp, target, weight=None, pos_weight=None):
    """The loss and d loss / d input for one case."""
    x = inp.clone().requires_grad_(True)
    kw = {}
    if fn in ("cross_entropy", "nll_loss"):
        kw = dict(reduction=opts.get("reduction", "mean"), ignore_index=opts.get("ignore_index", -100), weight=weight)
        if fn == "cross_entropy":
            kw["label_smoothing"] = opts.get("label_smoothing", 0.0)
        loss = getattr(F, fn)(x, target, **kw)
    elif fn in ("mse_loss", "l1_loss"):
        loss = getattr(F, fn)(x, target, reduction=opts.get("reduction", "mean"))
    elif fn == "binary_cross_entropy_with_logits":
        loss = F.binary_cross_entropy_with_logits(x, target, weight=weight, pos_weight=pos_weight,
                                                  reduction=opts.get("reduction", "mean"))
    elif fn == "kl_div":
        loss = F.kl_div(x, target, reduction=opts.get("reduction", "batchmean"),
                        log_target=opts.get("log_target", False))
    else:
        raise ValueError(fn)
    grad_output = None
    if loss.dim() == 0:
        loss.backward()
    else:
        grad_output = randn(*loss.shape)
        loss.backward(grad_output)
    return loss.detach(), x.grad.detach(), grad_output


def soft_targets(*shape, zeros=0):
    p = F.softmax(randn(*shape), dim=-1)
    if zeros:
        flat = p.view(-1)
        flat[torch.randperm(flat.numel(), generator=gen)[:zeros]] = 0.0
        p = p / p.sum(-1, keepdim=True)
    return p


def cases():
    """(name, fn, options, input, target, weight, pos_weight)."""
    out = []
    add = lambda name, fn, opts, inp, tgt, w=None, pw=None: out.append((name, fn, opts, inp, tgt, w, pw))  # noqa
    # ---- cross_entropy ----
    logits, t = randn(7, 5, scale=2.0), classes(5, (7,))
    t_ign = t.clone()
    t_ign[[1, 4]] = -100
    w = torch.rand(5, generator=gen) + 0.2
    for red in ("mean", "sum", "none"):
        add(f"ce_{red}", "cross_entropy", {"reduction": red}, logits, t)
        add(f"ce_ignore_{red}", "cross_entropy", {"reduction": red}, logits, t_ign)
        add(f"ce_weight_{red}", "cross_entropy", {"reduction": red}, logits, t_ign, w)
        add(f"ce_smooth_{red}", "cross_entropy", {"reduction": red, "label_smoothing": 0.1}, logits, t_ign)
        add(f"ce_smooth_weight_{red}", "cross_entropy", {"reduction": red, "label_smoothing": 0.25}, logits, t_ign, w)
    t_custom = t.clone()
    t_custom[t_custom == 2] = 3
    t_custom[0] = 2
    add("ce_ignore_index_2", "cross_entropy", {"ignore_index": 2}, logits, t_custom, w)
    spatial, t_sp = randn(3, 4, 2, 3, scale=1.5), classes(4, (3, 2, 3))
    t_sp[0, 1, 2] = -100
    w4 = torch.rand(4, generator=gen) + 0.5
    add("ce_spatial_mean", "cross_entropy", {"label_smoothing": 0.05}, spatial, t_sp, w4)
    add("ce_spatial_none", "cross_entropy", {"reduction": "none", "label_smoothing": 0.05}, spatial, t_sp, w4)
    add("ce_unbatched", "cross_entropy", {"label_smoothing": 0.2}, randn(6), torch.tensor(3))
    extreme = torch.tensor([[1e4, -1e4, 0.0, 5.0], [-1e4, -1e4, 1e4, -1e4], [0.0, 0.0, 0.0, 0.0], [-1e4, 1e4, -1e4, 1e4]])
    add("ce_extreme", "cross_entropy", {"label_smoothing": 0.1}, extreme, torch.tensor([1, 2, 0, 3]))
    add("ce_extreme_none", "cross_entropy", {"reduction": "none"}, extreme, torch.tensor([1, 2, 0, 3]))
    add("ce_all_ignored", "cross_entropy", {}, randn(3, 4), torch.tensor([-100, -100, -100]))
    # ---- nll_loss ----
    logp = F.log_softmax(randn(6, 4), dim=1)
    t6 = classes(4, (6,))
    t6[2] = -100
    for red in ("mean", "sum", "none"):
        add(f"nll_{red}", "nll_loss", {"reduction": red}, logp, t6)
        add(f"nll_weight_{red}", "nll_loss", {"reduction": red}, logp, t6, w4)
    add("nll_spatial", "nll_loss", {}, F.log_softmax(spatial, dim=1), t_sp, w4)
    # ---- mse / l1 ----
    a, b = randn(4, 5), randn(4, 5)
    b_tie = b.clone()
    b_tie[0, :3] = a[0, :3]
    for red in ("mean", "sum", "none"):
        add(f"mse_{red}", "mse_loss", {"reduction": red}, a, b)
        add(f"l1_{red}", "l1_loss", {"reduction": red}, a, b_tie)
    # ---- binary_cross_entropy_with_logits ----
    x, y = randn(5, 3, scale=3.0), (torch.rand(5, 3, generator=gen) > 0.5).float()
    y_soft = torch.rand(5, 3, generator=gen)
    w3, pw3 = torch.rand(3, generator=gen) + 0.5, torch.tensor([0.5, 2.0, 4.0])
    for red in ("mean", "sum", "none"):
        add(f"bce_{red}", "binary_cross_entropy_with_logits", {"reduction": red}, x, y)
        add(f"bce_weight_pos_{red}", "binary_cross_entropy_with_logits", {"reduction": red}, x, y_soft, w3, pw3)
    add("bce_pos_weight", "binary_cross_entropy_with_logits", {}, x, y, None, pw3)
    add("bce_weight_full", "binary_cross_entropy_with_logits", {}, x, y_soft, torch.rand(5, 3, generator=gen))
    xe = torch.tensor([[1e4, -1e4, 0.0], [-1e4, 1e4, 50.0], [-50.0, 30.0, -30.0]])
    ye = torch.tensor([[0.0, 1.0, 1.0], [0.0, 1.0, 0.3], [1.0, 0.0, 0.5]])
    add("bce_extreme", "binary_cross_entropy_with_logits", {"reduction": "none"}, xe, ye)
    add("bce_extreme_pos", "binary_cross_entropy_with_logits", {}, xe, ye, None, pw3)
    # ---- kl_div ----
    q = F.log_softmax(randn(4, 6), dim=1)
    p = soft_targets(4, 6, zeros=5)
    logp_t = F.log_softmax(randn(4, 6), dim=1)
    for red in ("batchmean", "sum", "mean", "none"):
        add(f"kl_{red}", "kl_div", {"reduction": red}, q, p)
        add(f"kl_log_target_{red}", "kl_div", {"reduction": red, "log_target": True}, q, logp_t)
    add("kl_3d", "kl_div", {}, F.log_softmax(randn(2, 3, 5), dim=-1), soft_targets(2, 3, 5))
    # ---- cross_entropy with class probabilities (Mixup / CutMix targets) ----
    # (drawn from their own generator, so that the other cases keep their values)
    with own_generator(4321):
        prob_cases(add)
    return out


def prob_cases(add):
    """Cross-entropy against class probabilities."""
    logits_p, probs = randn(6, 5, scale=2.0), soft_targets(6, 5, zeros=8)
    w5 = torch.rand(5, generator=gen) + 0.3
    for red in ("mean", "sum", "none"):
        add(f"ce_prob_{red}", "cross_entropy", {"reduction": red}, logits_p, probs)
        add(f"ce_prob_smooth_weight_{red}", "cross_entropy", {"reduction": red, "label_smoothing": 0.1}, logits_p,
            probs, w5)
    spatial_p = randn(2, 4, 3, 2)
    add("ce_prob_spatial", "cross_entropy", {"label_smoothing": 0.2}, spatial_p,
        soft_targets(2, 3, 2, 4).permute(0, 3, 1, 2).contiguous())


@contextlib.contextmanager
def own_generator(seed):
    """Draws from a generator of its own inside the block."""
    global gen
    saved, gen = gen, torch.Generator().manual_seed(seed)
    try:
        yield
    finally:
        gen = saved


def main():
    tensors, meta = {}, []
    for name, fn, opts, inp, tgt, w, pw in cases():
        loss, grad, grad_output = run(fn, opts, inp, tgt, w, pw)
        tensors[f"{name}.input"] = inp.float()
        tensors[f"{name}.target"] = tgt if tgt.dtype == torch.int64 else tgt.float()
        tensors[f"{name}.loss"] = loss
        tensors[f"{name}.grad_input"] = grad
        for key, t in (("weight", w), ("pos_weight", pw), ("grad_output", grad_output)):
            if t is not None:
                tensors[f"{name}.{key}"] = t.float()
        meta.append({"name": name, "fn": fn, "options": opts})
    save_file(tensors, os.path.join(DATA, "loss_tensors.safetensors"), {"torch_version": torch.__version__})
    with open(os.path.join(DATA, "loss_cases.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "cases": meta}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(meta)} loss cases to {DATA}")


if __name__ == "__main__":
    main()
