"""torchvision's transforms on uint8 tensor images, for tests/data/test_vision_transforms.cpp. Run
with a Python that has torch and torchvision (Debian's python3-torchvision):
    python3 vision_transforms_check.py IN OUT
IN (written by the test) holds "image3" ([3, H, W]) and "image1" ([1, H, W]), pixel values as
floats, and the metadata "cases": one case a line, "NAME CHANNELS OP [ARGS] [; OP [ARGS] ...]",
the ops applied in order. OUT holds each case's image as floats under NAME, "NAME.magnitude" for
an `op` case (the magnitude torchvision's table gives), and, when IN's metadata has "table" =
"BINS H W", the magnitude tables "table.wide" (TrivialAugmentWide) and "table.rand" (RandAugment
for an H x W image), [14, BINS] each, 0 for ops without magnitudes.
Ops: resized_crop TOP LEFT H W OUT_H OUT_W | resize S | resize H W | center_crop H W | hflip |
brightness F | contrast F | saturation F | hue F | sharpness F | op NAME BIN SIGN wide|rand |
aug NAME MAGNITUDE (the magnitude as given).
"""
import os
import sys

import torch
import torchvision.transforms.functional as F
from torchvision.transforms import InterpolationMode, RandAugment, TrivialAugmentWide
from torchvision.transforms.autoaugment import _apply_op

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from st_io import load_file, save_file  # noqa: E402

OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast",
       "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"]


def space(kind, bins, h, w):
    if kind == "wide":
        return TrivialAugmentWide(num_magnitude_bins=bins)._augmentation_space(bins)
    return RandAugment(num_magnitude_bins=bins)._augmentation_space(bins, (h, w))


def magnitude_of(name, b, sign, kind, h, w):
    mags, signed = space(kind, 31, h, w)[name]
    m = float(mags[b].item()) if mags.ndim > 0 else 0.0
    return -m if signed and sign < 0 else m


def run(img, ops):
    mag = None
    for op in ops:
        f = op.split()
        name, a = f[0], f[1:]
        if name == "resized_crop":
            img = F.resized_crop(img, int(a[0]), int(a[1]), int(a[2]), int(a[3]), [int(a[4]), int(a[5])],
                                 antialias=True)
        elif name == "resize":
            img = F.resize(img, [int(x) for x in a], antialias=True)
        elif name == "center_crop":
            img = F.center_crop(img, [int(a[0]), int(a[1])])
        elif name == "hflip":
            img = F.hflip(img)
        elif name in ("brightness", "contrast", "saturation", "hue", "sharpness"):
            img = getattr(F, "adjust_" + name)(img, float(a[0]))
        elif name == "op":
            _, h, w = F.get_dimensions(img)
            mag = magnitude_of(a[0], int(a[1]), int(a[2]), a[3], h, w)
            img = _apply_op(img, a[0], mag, InterpolationMode.NEAREST, None)
        elif name == "aug":
            img = _apply_op(img, a[0], float(a[1]), InterpolationMode.NEAREST, None)
        else:
            raise ValueError(name)
    return img, mag


def main():
    tensors, meta = load_file(sys.argv[1])
    images = {c: tensors[f"image{c}"].round().to(torch.uint8) for c in (1, 3)}
    out = {}
    for line in meta.get("cases", "").splitlines():
        if not line.strip():
            continue
        name, channels, rest = line.split(" ", 2)
        img, mag = run(images[int(channels)], [op.strip() for op in rest.split(";")])
        assert img.dtype == torch.uint8
        out[name] = img.to(torch.float32)
        if mag is not None:
            out[name + ".magnitude"] = torch.tensor([mag], dtype=torch.float64)
    if "table" in meta:
        bins, h, w = (int(x) for x in meta["table"].split())
        for kind in ("wide", "rand"):
            s = space(kind, bins, h, w)
            table = torch.zeros(len(OPS), bins, dtype=torch.float64)
            for i, op in enumerate(OPS):
                mags, _ = s[op]
                if mags.ndim > 0:
                    table[i] = mags.to(torch.float64)
            out["table." + kind] = table
    save_file(out, sys.argv[2])


if __name__ == "__main__":
    main()
