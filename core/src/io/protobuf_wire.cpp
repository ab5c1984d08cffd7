// The protobuf wire format's primitives: varints, little-endian fixed-width numbers, field keys
// and length-delimited fields.
#include "ingot/io/protobuf_wire.h"

#include <cstring>

namespace ingot::io {

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void append_little_endian(std::string& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void ProtoWriter::put_key(uint32_t field, WireType type) {
  append_varint(out_, (static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(type));
}

void ProtoWriter::put_int64(uint32_t field, int64_t v) { put_uint64(field, static_cast<uint64_t>(v)); }

void ProtoWriter::put_uint64(uint32_t field, uint64_t v) {
  put_key(field, WireType::Varint);
  append_varint(out_, v);
}

void ProtoWriter::put_float(uint32_t field, float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(field, WireType::Fixed32);
  append_little_endian(out_, bits, 4);
}

void ProtoWriter::put_double(uint32_t field, double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(field, WireType::Fixed64);
  append_little_endian(out_, bits, 8);
}

void ProtoWriter::put_bytes(uint32_t field, std::string_view bytes) {
  put_key(field, WireType::LengthDelimited);
  append_varint(out_, bytes.size());
  out_.append(bytes);
}

void ProtoWriter::put_packed_int64(uint32_t field, const int64_t* values, size_t n) {
  std::string run;
  for (size_t i = 0; i < n; ++i) append_varint(run, static_cast<uint64_t>(values[i]));
  put_bytes(field, run);
}

}  // namespace ingot::io
