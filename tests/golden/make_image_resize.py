"""Golden image resizing: torch.nn.functional.interpolate (bilinear, align_corners=False,
antialias False, and True for the modes ending in _aa), alone ("stretch") and after torchvision's Resize(shorter side) + CenterCrop
geometry ("crop", written out here because Debian has no torchvision).

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_image_resize.py
Writes tests/golden/data/image_resize.safetensors. For each case NAME: "NAME.x" (f32 [C, H, W],
whole numbers 0..255 like decoded pixels) and "NAME.y" (f32 [C, OH, OW]); crop cases also hold
"NAME.box" (i64 [4]: resized height, resized width, top, left). Metadata "cases" is a JSON list of
{name, mode, height, width} with height, width the output size.
"""
import json
import os

import torch
import torch.nn.functional as F

import st_io

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "image_resize.safetensors")

# name, mode, input [C, H, W], output (OH, OW)
CASES = [
    ("up", "stretch", (3, 5, 7), (11, 13)),
    ("down", "stretch", (2, 17, 23), (6, 9)),
    ("mixed", "stretch", (1, 8, 8), (8, 5)),
    ("shrink_many", "stretch", (1, 40, 31), (7, 4)),
    ("crop_wide", "crop", (3, 16, 20), (12, 12)),
    ("crop_tall", "crop", (1, 21, 10), (8, 8)),
    ("crop_third", "crop", (1, 13, 9), (6, 6)),
    ("crop_tie", "crop", (1, 11, 6), (6, 6)),
    ("crop_up", "crop", (1, 4, 6), (9, 9)),
    # antialias=True (torchvision's Resize default): shrinking by 2 to 8, and growing
    ("aa_down", "stretch_aa", (3, 32, 40), (8, 5)),
    ("aa_odd", "stretch_aa", (1, 23, 17), (7, 6)),
    ("aa_up", "stretch_aa", (1, 5, 4), (9, 11)),
    ("aa_crop", "crop_aa", (3, 40, 64), (12, 12)),
]


def crop_box(h, w, size):
    """torchvision's Resize(size) (shorter side to size) and CenterCrop(size) for a square output."""
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = size, int(size * long / short)
    nh, nw = (new_long, new_short) if w <= h else (new_short, new_long)
    return nh, nw, int(round((nh - size) / 2.0)), int(round((nw - size) / 2.0))


def main():
    torch.manual_seed(3)
    tensors, cases = {}, []
    for name, mode, shape, (oh, ow) in CASES:
        x = torch.randint(0, 256, shape).float()
        aa = mode.endswith("_aa")
        if mode.startswith("stretch"):
            y = F.interpolate(x[None], size=(oh, ow), mode="bilinear", align_corners=False, antialias=aa)[0]
        else:
            assert oh == ow
            nh, nw, top, left = crop_box(shape[1], shape[2], oh)
            r = F.interpolate(x[None], size=(nh, nw), mode="bilinear", align_corners=False, antialias=aa)[0]
            y = r[:, top:top + oh, left:left + ow]
            tensors[name + ".box"] = torch.tensor([nh, nw, top, left], dtype=torch.int64)
        tensors[name + ".x"] = x
        tensors[name + ".y"] = y.contiguous()
        cases.append({"name": name, "mode": mode, "height": oh, "width": ow})
    st_io.save_file(tensors, OUT, {"cases": json.dumps(cases)})
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
