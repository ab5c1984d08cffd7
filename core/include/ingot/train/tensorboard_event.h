// The TensorBoard event-file format without a protobuf library: CRC32C, the TFRecord framing
// (length, masked CRCs) and the few fields of tensorboard's Event / Summary protos a scalar needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ingot::train::tensorboard {

/// CRC-32C (Castagnoli) of `data`, as TFRecord files use it.
uint32_t crc32c(std::string_view data);
/// The CRC stored in a record: rotated right by 15 bits plus 0xa282ead8, so that a CRC of data
/// holding CRCs stays well distributed.
uint32_t masked_crc32c(std::string_view data);

/// One TFRecord: uint64 length, uint32 masked CRC of the length bytes, the data, uint32 masked CRC
/// of the data (all little-endian).
std::string tf_record(std::string_view data);

/// A serialized Event {wall_time, file_version}: the first record of every event file.
std::string file_version_event(double wall_time, std::string_view version = "brain.Event:2");
/// A serialized Event {wall_time, step, summary {value {tag, simple_value}}}.
std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value);

}  // namespace ingot::train::tensorboard
