// The protobuf wire format by hand, for the few files Ingot writes in protobuf (TensorBoard event
// files, ONNX models): varint keys and integers, fixed32 / fixed64 numbers, length-delimited
// bytes and nested messages. No protobuf library; fields are written in the order they are put.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ingot::io {

/// Protobuf wire types (the low three bits of a field key).
enum class WireType : uint32_t { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

/// Appends `v` as a base-128 varint (7 bits per byte, low bits first): 1 to 10 bytes.
void append_varint(std::string& out, uint64_t v);
/// Appends the `n` low bytes of `v`, little-endian (fixed32: n = 4, fixed64: n = 8).
void append_little_endian(std::string& out, uint64_t v, size_t n);

/// One serialized message under construction. Each put_* appends one field (its key, then its
/// value); a nested message is another ProtoWriter's bytes given to put_message.
class ProtoWriter {
 public:
  /// int32 / int64 / uint64 / enum / bool: a varint. A negative value takes ten bytes (the
  /// two's complement as uint64), as protobuf encodes int32 and int64.
  void put_int64(uint32_t field, int64_t v);
  void put_uint64(uint32_t field, uint64_t v);
  /// float: fixed32 with the IEEE-754 bits.
  void put_float(uint32_t field, float v);
  /// double: fixed64 with the IEEE-754 bits.
  void put_double(uint32_t field, double v);
  /// string / bytes: the length as a varint, then the bytes.
  void put_bytes(uint32_t field, std::string_view bytes);
  /// A nested message (its serialized bytes), length-delimited.
  void put_message(uint32_t field, const ProtoWriter& message) { put_bytes(field, message.bytes()); }
  /// A packed repeated int64 field: one length-delimited run of varints.
  void put_packed_int64(uint32_t field, const int64_t* values, size_t n);

  /// The serialized message so far.
  const std::string& bytes() const { return out_; }
  size_t size() const { return out_.size(); }

 private:
  void put_key(uint32_t field, WireType type);

  std::string out_;
};

}  // namespace ingot::io
