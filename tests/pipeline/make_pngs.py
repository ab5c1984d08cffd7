#!/usr/bin/env python3
"""Writes a folder of PNG images of three classes (Python standard library only), for the image
tests: OUT/train/<class>/NN.png and OUT/test/<class>/NN.png.

Class "bars": the top half bright; "columns": the left half bright; "frame": a bright border.
Random tints and noise; every 5th image grey, every 7th RGBA, every 3rd 20 pixels wide; and one
file that is not an image (train/bars/notes.txt), which the dataset skips.
Usage: make_pngs.py OUT [TRAIN_PER_CLASS TEST_PER_CLASS]  (default 30 10)
"""
import os, random, struct, sys, zlib
def png(path, w, h, kind, rows):
    colour = {"grey": 0, "rgb": 2, "rgba": 6}[kind]
    raw = b"".join(b"\0" + bytes(r) for r in rows)
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
def bright(c, x, y, w, h):
    if c == 0: return y < h // 2
    if c == 1: return x < w // 2
    return x < 3 or y < 3 or x >= w - 3 or y >= h - 3
rng = random.Random(7)
counts = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (30, 10)
for split, count in zip(("train", "test"), counts):
    for c, name in enumerate(("bars", "columns", "frame")):
        os.makedirs(f"{sys.argv[1]}/{split}/{name}")
        for i in range(count):
            w, h = (20 if i % 3 == 0 else 16), 16
            kind = "grey" if i % 5 == 0 else "rgba" if i % 7 == 0 else "rgb"
            tint = [rng.uniform(0.6, 1.0) for _ in range(3)]
            rows = []
            for y in range(h):
                row = []
                for x in range(w):
                    v = (200 if bright(c, x, y, w, h) else 40) + rng.randint(-30, 30)
                    px = [max(0, min(255, int(v * t))) for t in tint]
                    row += px[:1] if kind == "grey" else px + ([255] if kind == "rgba" else [])
                rows.append(row)
            png(f"{sys.argv[1]}/{split}/{name}/{i:02d}.png", w, h, kind, rows)
open(f"{sys.argv[1]}/train/bars/notes.txt", "w").write("not an image\n")
