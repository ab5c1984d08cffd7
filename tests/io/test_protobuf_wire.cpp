// The protobuf wire format (io/protobuf_wire.h) byte for byte: varint edge cases, field keys,
// negative int64, fixed32 / fixed64, length-delimited and nested fields, packed repeated ints.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "ingot/io/protobuf_wire.h"

using ingot::io::ProtoWriter;

namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string varint(uint64_t v) {
  std::string out;
  ingot::io::append_varint(out, v);
  return hex(out);
}

}  // namespace

TEST_CASE("protobuf wire: varints at the 7-bit boundaries", "[protobuf]") {
  CHECK(varint(0) == "00");
  CHECK(varint(1) == "01");
  CHECK(varint(127) == "7f");
  CHECK(varint(128) == "80 01");
  CHECK(varint(300) == "ac 02");
  CHECK(varint(16383) == "ff 7f");
  CHECK(varint(16384) == "80 80 01");
  CHECK(varint(uint64_t{1} << 63) == "80 80 80 80 80 80 80 80 80 01");
  CHECK(varint(std::numeric_limits<uint64_t>::max()) == "ff ff ff ff ff ff ff ff ff 01");
}

TEST_CASE("protobuf wire: int64 fields, negative values in ten bytes", "[protobuf]") {
  ProtoWriter w;
  w.put_int64(1, 150);
  CHECK(hex(w.bytes()) == "08 96 01");  // the protobuf documentation's example
  ProtoWriter n;
  n.put_int64(2, -1);
  CHECK(hex(n.bytes()) == "10 ff ff ff ff ff ff ff ff ff 01");
  ProtoWriter big;
  big.put_int64(16, 1);  // field 16: a two-byte key
  CHECK(hex(big.bytes()) == "80 01 01");
}

TEST_CASE("protobuf wire: float and double fields are little-endian IEEE-754", "[protobuf]") {
  ProtoWriter w;
  w.put_float(2, 1.0f);
  w.put_double(1, -2.0);
  CHECK(hex(w.bytes()) == "15 00 00 80 3f 09 00 00 00 00 00 00 00 c0");
}

TEST_CASE("protobuf wire: bytes, nested messages and packed repeated ints", "[protobuf]") {
  ProtoWriter inner;
  inner.put_bytes(1, "testing");
  CHECK(hex(inner.bytes()) == "0a 07 74 65 73 74 69 6e 67");
  ProtoWriter outer;
  outer.put_message(3, inner);
  CHECK(hex(outer.bytes()) == "1a 09 0a 07 74 65 73 74 69 6e 67");
  ProtoWriter empty;
  empty.put_bytes(4, "");
  CHECK(hex(empty.bytes()) == "22 00");
  const int64_t values[] = {3, 270, 86942};
  ProtoWriter packed;
  packed.put_packed_int64(4, values, 3);
  CHECK(hex(packed.bytes()) == "22 06 03 8e 02 9e a7 05");  // the documentation's packed example
}
