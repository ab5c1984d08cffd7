"""Records torch's knowledge-distillation loss for tests/compress/test_distill.cpp.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_distill.py
Writes tests/golden/data/distill.safetensors: for each case "<case>.student", ".teacher" (logits
[8, 10], float32), ".target" (int64 [8]) and the results ".kd" (T^2 * KL_batchmean(softmax(t/T) ||
softmax(s/T)), Hinton et al. 2015), ".ce" (cross entropy), ".loss" (alpha * kd + (1 - alpha) *
ce), ".grad_kd" and ".grad_loss" (their gradients with respect to the student's logits); the
metadata "<case>.temperature" and "<case>.alpha". Computed in float64 from the float32 inputs,
stored as float32.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_io import save_file  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
gen = torch.Generator().manual_seed(2015)

# (name, temperature, alpha, logit scale): the usual T=4 / alpha=0.9, T=1 (plain KL), a high T,
# T < 1 with large logits (teacher probabilities that underflow), and both ends of alpha.
CASES = [
    ("t4_a09", 4.0, 0.9, 3.0),
    ("t1_a05", 1.0, 0.5, 2.0),
    ("t20_a07", 20.0, 0.7, 5.0),
    ("t05_a03_large", 0.5, 0.3, 40.0),
    ("t2_a0", 2.0, 0.0, 3.0),
    ("t3_a1", 3.0, 1.0, 3.0),
]


def torch_kd(s, t, T):
    """The torch tutorials' soft-target term."""
    return F.kl_div(F.log_softmax(s / T, dim=1), F.softmax(t / T, dim=1), reduction="batchmean") * T * T


def main():
    tensors, meta = {}, {}
    for name, T, alpha, scale in CASES:
        s32 = torch.randn(8, 10, generator=gen) * scale
        t32 = torch.randn(8, 10, generator=gen) * scale
        y = torch.randint(0, 10, (8,), generator=gen)
        s = s32.double().requires_grad_(True)
        kd = torch_kd(s, t32.double(), T)
        (grad_kd,) = torch.autograd.grad(kd, s)
        s = s32.double().requires_grad_(True)
        ce = F.cross_entropy(s, y)
        loss = alpha * torch_kd(s, t32.double(), T) + (1 - alpha) * ce
        loss.backward()
        tensors.update({
            f"{name}.student": s32, f"{name}.teacher": t32, f"{name}.target": y,
            f"{name}.kd": kd.detach().float().reshape(1), f"{name}.ce": ce.detach().float().reshape(1),
            f"{name}.loss": loss.detach().float().reshape(1),
            f"{name}.grad_kd": grad_kd.float(), f"{name}.grad_loss": s.grad.float(),
        })
        meta[f"{name}.temperature"] = repr(T)
        meta[f"{name}.alpha"] = repr(alpha)
    meta["cases"] = ",".join(c[0] for c in CASES)
    meta["torch"] = torch.__version__
    os.makedirs(DATA, exist_ok=True)
    save_file(tensors, os.path.join(DATA, "distill.safetensors"), meta)
    print(f"wrote {len(CASES)} cases to {os.path.join(DATA, 'distill.safetensors')} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
