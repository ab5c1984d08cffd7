// TensorBoard events by hand: the protobuf wire format (varint keys and integers, fixed64 /
// fixed32 numbers, length-delimited strings and messages) for the fields of event.proto and
// summary.proto that scalars use, framed as TFRecords with Boost.CRC's CRC-32C.
#include "ingot/train/tensorboard_event.h"

#include <boost/crc.hpp>
#include <cstring>

namespace ingot::train::tensorboard {
namespace {

// Protobuf wire types.
constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// Event fields (tensorboard/compat/proto/event.proto).
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
// Summary.value (summary.proto) and Summary.Value's tag and simple_value.
constexpr uint32_t kSummaryValue = 1, kValueTag = 1, kValueSimpleValue = 2;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <class T>
void put_little_endian(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_key(std::string& out, uint32_t field, uint32_t wire_type) { put_varint(out, (field << 3) | wire_type); }

void put_double(std::string& out, uint32_t field, double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, kFixed64);
  put_little_endian(out, bits);
}

void put_float(std::string& out, uint32_t field, float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  put_key(out, field, kFixed32);
  put_little_endian(out, bits);
}

void put_int64(std::string& out, uint32_t field, int64_t v) {
  put_key(out, field, kVarint);
  put_varint(out, static_cast<uint64_t>(v));  // negative int64: ten bytes, as protobuf does
}

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}

}  // namespace

uint32_t crc32c(std::string_view data) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data.data(), data.size());
  return crc.checksum();
}

uint32_t masked_crc32c(std::string_view data) {
  const uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tf_record(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_little_endian(out, static_cast<uint64_t>(data.size()));
  put_little_endian(out, masked_crc32c(std::string_view(out.data(), 8)));
  out.append(data);
  put_little_endian(out, masked_crc32c(data));
  return out;
}

std::string file_version_event(double wall_time, std::string_view version) {
  std::string event;
  put_double(event, kEventWallTime, wall_time);
  put_bytes(event, kEventFileVersion, version);
  return event;
}

std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string summary_value;
  put_bytes(summary_value, kValueTag, tag);
  put_float(summary_value, kValueSimpleValue, value);
  std::string summary;
  put_bytes(summary, kSummaryValue, summary_value);
  std::string event;
  put_double(event, kEventWallTime, wall_time);
  put_int64(event, kEventStep, step);
  put_bytes(event, kEventSummary, summary);
  return event;
}

}  // namespace ingot::train::tensorboard
