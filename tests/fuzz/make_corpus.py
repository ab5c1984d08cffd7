#!/usr/bin/env python3
"""Writes the seed corpora of the IDX and safetensors fuzz targets (tests/fuzz/corpus/fuzz_idx,
tests/fuzz/corpus/fuzz_safetensors) and copies the config seeds. Deterministic (gzip mtime 0), so
running it again changes nothing; crash reproducers saved beside the seeds are left alone."""
import gzip
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, compresslevel=6, mtime=0)


def idx(dims, data, dtype=0x08):
    return bytes([0, 0, dtype, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + bytes(data)


def ramp(n):
    return bytes((i * 7 + 3) & 0xFF for i in range(n))


def idx_seeds():
    t = "fuzz_idx"
    write(t, "plain_1d", idx([5], ramp(5)))
    write(t, "plain_2x3", idx([2, 3], ramp(6)))
    write(t, "gz_2x3x4.gz", gz(idx([2, 3, 4], ramp(24))))
    write(t, "gz_mnist_like_3x4x4.gz", gz(idx([3, 4, 4], ramp(48))))
    write(t, "gz_labels_10.gz", gz(idx([10], [i % 10 for i in range(10)])))
    write(t, "plain_zero_dim", idx([0, 7], b""))
    write(t, "plain_8_dims", idx([1, 1, 2, 1, 1, 1, 1, 2], ramp(4)))
    write(t, "gz_two_members.gz", gz(idx([4], b"")) + gz(ramp(4)))  # a header and data in two gzip members
    write(t, "plain_truncated", idx([4, 4], ramp(9)))
    write(t, "plain_trailing", idx([3], ramp(5)))
    write(t, "plain_float_dtype", idx([2], b"\0\0\x80\x3f\0\0\0\x40", dtype=0x0D))
    write(t, "plain_huge_dims", idx([0xFFFFFFFF, 0xFFFFFFFF], b""))
    write(t, "plain_header_only", bytes([0, 0, 8, 3, 0, 0]))
    good = gz(idx([3, 3], ramp(9)))
    write(t, "gz_truncated.gz", good[: len(good) - 6])
    bad_crc = bytearray(good)
    bad_crc[-8] ^= 0xFF
    write(t, "gz_bad_crc.gz", bytes(bad_crc))
    write(t, "empty", b"")


DTYPE_SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I8": 1, "U8": 1, "BOOL": 1}


def safetensors(tensors, metadata=None, pad=True):
    """tensors: [(name, dtype, shape, bytes)] in name order, as the writer lays them out."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    data = b""
    for name, dtype, shape, raw in sorted(tensors, key=lambda t: t[0]):
        n = DTYPE_SIZE[dtype]
        for d in shape:
            n *= d
        assert len(raw) == n, name
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    t = "fuzz_safetensors"
    f32 = struct.pack("<4f", 1.0, -2.5, 0.0, 3.25)
    write(t, "f32_2x2.safetensors", safetensors([("w", "F32", [2, 2], f32)]))
    write(t, "linear_with_metadata.safetensors", safetensors(
        [("fc.weight", "F32", [2, 2], f32), ("fc.bias", "F32", [2], f32[:8])],
        metadata={"format": "pt", "ingot.step": "12"}))
    every = [("f64", "F64", [2], struct.pack("<2d", 1.5, -1.0)), ("f16", "F16", [2], b"\x00\x3c\x00\xc0"),
             ("bf16", "BF16", [2], b"\x80\x3f\x00\xc0"), ("i64", "I64", [1], struct.pack("<q", -7)),
             ("i32", "I32", [3], struct.pack("<3i", 1, 2, 3)), ("i8", "I8", [2], b"\x7f\x80"),
             ("u8", "U8", [3], b"\x00\x01\xff"), ("mask", "BOOL", [2, 2], b"\x00\x01\x01\x00")]
    write(t, "every_dtype.safetensors", safetensors(every))
    write(t, "scalar.safetensors", safetensors([("step", "I64", [], struct.pack("<q", 1000))]))
    write(t, "empty_tensor.safetensors", safetensors([("e", "F32", [0, 3], b""), ("x", "U8", [1], b"\x05")]))
    write(t, "no_tensors.safetensors", safetensors([]))
    write(t, "metadata_only.safetensors", safetensors([], metadata={"note": "nothing"}))
    write(t, "unpadded.safetensors", safetensors([("a", "I32", [1], struct.pack("<i", 9))], pad=False))
    bad_bool = safetensors([("m", "BOOL", [2], b"\x00\x02")])
    write(t, "bad_bool.safetensors", bad_bool)
    gap = b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}'
    write(t, "gap.safetensors", struct.pack("<Q", len(gap)) + gap + b"\x00\x01")
    write(t, "truncated_header.safetensors", struct.pack("<Q", 64) + b'{"a":')
    write(t, "short.safetensors", b"\x08\x00\x00")


def config_seeds():
    t = "fuzz_config"
    for src in ["configs/smoke.yaml", "configs/fashion_mnist_mlp.yaml", "configs/fashion_mnist_cnn.yaml",
                "configs/fashion_mnist_resnet.yaml", "tests/configs/good/smoke_small.yaml",
                "tests/configs/bad/duplicate_key.yaml", "tests/configs/bad/nested_unknown_key.yaml",
                "tests/configs/bad/syntax_error.yaml", "tests/configs/bad/binary_garbage.yaml"]:
        name = src.replace("/", "_")
        os.makedirs(os.path.join(CORPUS, t), exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, src), os.path.join(CORPUS, t, name))
    with open(os.path.join(ROOT, "configs/fashion_mnist_mlp.yaml"), "rb") as f:
        mlp = f.read()
    write(t, "overrides.yaml", b"#--set data.batch_size=32\n#--set train.epochs=2\n#--set model.sizes=[784, 64, 10]\n" + mlp)
    write(t, "anchors.yaml", b"name: &n anchors\nbackend: cpu\nsmoke: &s {matmul_size: 8, repeats: 1}\n"
                             b"data: {dataset: synthetic, batch_size: 4}\nstages: [train, {type: evaluate}]\n")


if __name__ == "__main__":
    idx_seeds()
    safetensors_seeds()
    config_seeds()
