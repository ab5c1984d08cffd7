"""Trains a torchvision model from an Ingot test's initial weights on its batches, for
tests/nn/test_imagenet_presets.cpp (Debian's python3-torch and python3-torchvision):
    python3 torchvision_train.py IN OUT
IN holds "state.<name>" (the initial state_dict), "batch.<k>.x" / "batch.<k>.y" and the metadata
"model" (a torchvision.models builder), "kwargs" (JSON), "steps", "lr", "momentum". Step s uses
batch s % batches: zero_grad, cross_entropy(model(x), y), backward, SGD(lr, momentum) step, in
train mode, on 2 threads. OUT gets "losses" (f64 [steps]) and step 0's gradients as "grad.<name>";
with the metadata "spread" = "1" also "spread": the largest difference between those losses and a
second run's on 1 thread (other summation orders), torch's own f32 noise on this trajectory.
"""
import json
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from st_io import load_file, save_file  # noqa: E402


def train(tensors, meta, threads):
    """The losses of meta["steps"] steps with `threads` threads, and step 0's gradients."""
    torch.set_num_threads(threads)
    model = getattr(torchvision.models, meta["model"])(**json.loads(meta["kwargs"]))
    model.load_state_dict({k[len("state."):]: v for k, v in tensors.items() if k.startswith("state.")}, strict=True)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=float(meta["lr"]), momentum=float(meta["momentum"]))
    batches = len([k for k in tensors if k.startswith("batch.") and k.endswith(".x")])
    losses, out = [], {}
    for s in range(int(meta["steps"])):
        x, y = tensors["batch.%d.x" % (s % batches)], tensors["batch.%d.y" % (s % batches)]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if s == 0:
            out.update({"grad." + n: p.grad.detach().clone() for n, p in model.named_parameters()})
        opt.step()
        losses.append(loss.item())
    out["losses"] = torch.tensor(losses, dtype=torch.float64)
    return out


def main():
    tensors, meta = load_file(sys.argv[1])
    out = train(tensors, meta, 2)
    if meta.get("spread") == "1":
        # torch's own spread: the same training on 1 thread (other summation orders), the largest
        # difference of a loss; the f32 noise floor of this trajectory.
        other = train(tensors, meta, 1)["losses"]
        out["spread"] = (out["losses"] - other).abs().max().reshape(1)
    save_file(out, sys.argv[2])


if __name__ == "__main__":
    main()
