"""Weights between Ingot's ImageNet presets and torchvision's models, both ways, for
tests/nn/test_imagenet_presets.cpp. Run with a Python that has torch and torchvision (Debian's
python3-torchvision; no weights are downloaded):
    python3 torchvision_check.py IN OUT
IN (written by the test) holds "state.<name>" (an Ingot state_dict), "input" and the metadata
"model" (a torchvision.models builder, e.g. resnet50) and "kwargs" (JSON). The script builds the
torchvision model, loads the state strictly, and writes to OUT its eval logits for the input
("logits") and, from a torchvision model of its own (seeded, running statistics updated by three
train-mode batches), "state.<name>" and that model's eval logits ("own_logits").
"""
import json
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from st_io import load_file, save_file  # noqa: E402


def build(meta):
    return getattr(torchvision.models, meta["model"])(**json.loads(meta["kwargs"]))


def main():
    tensors, meta = load_file(sys.argv[1])
    x = tensors["input"]
    model = build(meta)
    state = {k[len("state."):]: v for k, v in tensors.items() if k.startswith("state.")}
    model.load_state_dict(state, strict=True)
    model.eval()
    with torch.no_grad():
        logits = model(x)
    torch.manual_seed(3)
    own = build(meta)
    with torch.no_grad():
        for i in range(3):
            own(torch.randn_like(x) * (1 + i) + 0.5)  # train mode: non-trivial running statistics
        own.eval()
        own_logits = own(x)
    out = {"logits": logits, "own_logits": own_logits}
    out.update({"state." + k: v for k, v in own.state_dict().items()})
    save_file(out, sys.argv[2])


if __name__ == "__main__":
    main()
