// TensorBoard events by hand: the fields of event.proto and summary.proto that scalars use, in the
// protobuf wire format (io/protobuf_wire.h), framed as TFRecords with Boost.CRC's CRC-32C.
#include "ingot/train/tensorboard_event.h"

#include <boost/crc.hpp>

#include "ingot/io/protobuf_wire.h"

namespace ingot::train::tensorboard {
namespace {

// Event fields (tensorboard/compat/proto/event.proto).
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
// Summary.value (summary.proto) and Summary.Value's tag and simple_value.
constexpr uint32_t kSummaryValue = 1, kValueTag = 1, kValueSimpleValue = 2;

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
  io::append_little_endian(out, data.size(), 8);
  io::append_little_endian(out, masked_crc32c(std::string_view(out.data(), 8)), 4);
  out.append(data);
  io::append_little_endian(out, masked_crc32c(data), 4);
  return out;
}

std::string file_version_event(double wall_time, std::string_view version) {
  io::ProtoWriter event;
  event.put_double(kEventWallTime, wall_time);
  event.put_bytes(kEventFileVersion, version);
  return event.bytes();
}

std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
  io::ProtoWriter summary_value;
  summary_value.put_bytes(kValueTag, tag);
  summary_value.put_float(kValueSimpleValue, value);
  io::ProtoWriter summary;
  summary.put_message(kSummaryValue, summary_value);
  io::ProtoWriter event;
  event.put_double(kEventWallTime, wall_time);
  event.put_int64(kEventStep, step);
  event.put_message(kEventSummary, summary);
  return event.bytes();
}

}  // namespace ingot::train::tensorboard
