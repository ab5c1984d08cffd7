"""Edits a safetensors file in place, for the fault tests, with the standard library only: a
metadata value, a tensor element, a data byte; recomputes Ingot's checksum (__metadata__
"ingot_crc32", as docs/integrity.md describes it) or leaves it stale; checks it.

    python3 st_edit.py FILE meta KEY VALUE [--keep-crc]      set (or add) a metadata string
    python3 st_edit.py FILE drop KEY [--keep-crc]            remove a metadata entry
    python3 st_edit.py FILE value TENSOR INDEX VALUE [--keep-crc]   set one F32 element (nan, inf ok)
    python3 st_edit.py FILE flip [--keep-crc]                flip a bit of the last data byte
    python3 st_edit.py FILE check                            exit 0 when the checksum verifies
    python3 st_edit.py FILE format1                          rewrite as an Ingot checkpoint of format 1
"""
import json
import struct
import sys
import zlib


def read(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    return header, bytearray(raw[8 + n:])


def write(path, header, data):
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(data))


def checksum(header, data):
    """CRC-32 over the metadata entries but ingot_crc32 (key NUL value NUL, in key order), then the
    tensors in name order: name NUL dtype NUL dims joined by ',' NUL, then their bytes."""
    crc = 0
    for key, value in sorted(header.get("__metadata__", {}).items()):
        if key != "ingot_crc32":
            crc = zlib.crc32(key.encode() + b"\0" + value.encode() + b"\0", crc)
    for name in sorted(k for k in header if k != "__metadata__"):
        e = header[name]
        begin, end = e["data_offsets"]
        dims = ",".join(str(d) for d in e["shape"])
        crc = zlib.crc32(name.encode() + b"\0" + e["dtype"].encode() + b"\0" + dims.encode() + b"\0", crc)
        crc = zlib.crc32(bytes(data[begin:end]), crc)
    return "%08x" % crc


def data_checksum(header, data):
    """Format 1's: CRC-32 over the tensors' names and bytes, in name order."""
    crc = 0
    for name in sorted(k for k in header if k != "__metadata__"):
        begin, end = header[name]["data_offsets"]
        crc = zlib.crc32(name.encode() + bytes(data[begin:end]), crc)
    return "%08x" % crc


def main(argv):
    path, op, args = argv[1], argv[2], [a for a in argv[3:] if a != "--keep-crc"]
    keep = "--keep-crc" in argv
    header, data = read(path)
    meta = header.setdefault("__metadata__", {})
    if op == "check":
        return 0 if meta.get("ingot_crc32") == checksum(header, data) else 1
    if op == "meta":
        meta[args[0]] = args[1]
    elif op == "drop":
        meta.pop(args[0], None)
    elif op == "value":
        e = header[args[0]]
        assert e["dtype"] == "F32", e["dtype"]
        struct.pack_into("<f", data, e["data_offsets"][0] + 4 * int(args[1]), float(args[2]))
    elif op == "flip":
        data[-1] ^= 0x10
    elif op == "format1":
        meta.pop("ingot_crc32", None)
        meta["ingot_checkpoint"] = "1"
        meta["data_crc32"] = data_checksum(header, data)
        keep = True
    else:
        raise SystemExit("unknown operation " + op)
    if not keep and "ingot_crc32" in meta:
        meta["ingot_crc32"] = checksum(header, data)
    write(path, header, data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
