"""Torch side of the init_from check: makes a torch.nn simple CNN (torch's own initialisation,
one SGD epoch on a slice of Fashion-MNIST so it predicts something), saves its state_dict with the
standard-library safetensors helper, and prints its test accuracy and mean loss.

    /usr/bin/python3 tests/pipeline/torch_weights.py OUT.safetensors DATASET_DIR
"""
import gzip
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import make_nn  # noqa: E402
import st_io  # noqa: E402


def idx(path):
    raw = gzip.open(path).read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def images(path):
    return ((idx(path).float() / 255 - 0.2860) / 0.3530).unsqueeze(1)


def main(out, data):
    torch.manual_seed(0)
    model = make_nn.simple_cnn(1, 28, 8, 32, 10, 0.0)
    x = images(os.path.join(data, "train-images-idx3-ubyte.gz"))[:2048]
    y = idx(os.path.join(data, "train-labels-idx1-ubyte.gz"))[:2048].long()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for i in range(0, 2048, 64):
        opt.zero_grad()
        F.cross_entropy(model(x[i:i + 64]), y[i:i + 64]).backward()
        opt.step()
    st_io.save_file(model.state_dict(), out)
    model.eval()
    tx = images(os.path.join(data, "t10k-images-idx3-ubyte.gz"))
    ty = idx(os.path.join(data, "t10k-labels-idx1-ubyte.gz")).long()
    with torch.no_grad():
        logits = model(tx)
    correct = (logits.argmax(1) == ty).sum().item()
    loss = F.cross_entropy(logits, ty).item()
    print(f"{correct} {loss:.6f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
