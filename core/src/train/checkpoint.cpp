// Checkpoint files: one safetensors file with prefixed tensor names and string metadata.
#include "ingot/train/checkpoint.h"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <charconv>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/io/safetensors.h"

namespace ingot::train {

namespace {

constexpr const char* kModel = "model/";
constexpr const char* kOptim = "optimizer/";
constexpr const char* kScaler = "scaler/";
constexpr const char* kSelection = "selection/";

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

template <class T>
T parse_number(const io::Metadata& meta, const std::string& key, const std::filesystem::path& file) {
  const auto it = meta.find(key);
  if (it == meta.end())
    throw InputError(fmt::format("{}: not an Ingot checkpoint: metadata field '{}' is missing", file.string(), key));
  T value{};
  const char* end = it->second.data() + it->second.size();
  const auto [ptr, ec] = std::from_chars(it->second.data(), end, value);
  if (ec != std::errc() || ptr != end)
    throw InputError(
        fmt::format("{}: checkpoint field '{}' is not a number: '{}'", file.string(), key, printable(it->second)));
  return value;
}

/// The checksum of format 1 (before the metadata was covered): CRC-32 (zlib's) over every tensor's
/// name and bytes, in name order.
std::string data_checksum(const std::map<std::string, Tensor>& tensors) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const auto& [name, t] : tensors) {
    crc = crc32(crc, reinterpret_cast<const Bytef*>(name.data()), static_cast<uInt>(name.size()));
    const auto* p = static_cast<const Bytef*>(t.storage()->data()) + t.offset() * dtype_size(t.dtype());
    size_t left = static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
    while (left > 0) {  // crc32 takes at most uInt bytes at a time
      const auto n = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
      crc = crc32(crc, p, n);
      p += n;
      left -= n;
    }
  }
  return fmt::format("{:08x}", static_cast<uint32_t>(crc));
}

/// Format 2 is covered by the file's checksum (io::kChecksumKey); format 1, written before, is
/// verified by its data checksum where it has one, and says what was left unchecked.
std::string verify(const io::SafetensorsFile& f, const std::string& format, const std::filesystem::path& file) {
  if (format == "2") {
    if (!f.checksummed)
      throw InputError(
          fmt::format("{}: the checkpoint has lost its checksum (__metadata__ '{}'), so nothing in it can "
                      "be trusted: resume from an older checkpoint, or start over with --force",
                      file.string(), io::kChecksumKey));
    return "";
  }
  if (f.checksummed) return "";  // (a format-1 file saved again through io::save_safetensors)
  const auto crc = f.metadata.find("data_crc32");
  if (crc == f.metadata.end())
    return "it was written by an Ingot from before checkpoints carried a checksum: loaded as it is, unverified";
  const std::string actual = data_checksum(f.tensors);
  if (actual != crc->second)
    throw InputError(
        fmt::format("{}: the checkpoint's data is damaged (CRC-32 {} where '{}' was recorded): resume from "
                    "an older checkpoint, or start over with --force",
                    file.string(), actual, printable(crc->second)));
  return "it was written by an Ingot from before checkpoints covered their metadata: its tensors verify, its "
         "position and optimizer settings are taken as they are";
}

}  // namespace

void save_checkpoint(const std::filesystem::path& file, const Checkpoint& c) {
  io::NamedTensors tensors;
  tensors.reserve(c.model.size() + c.optimizer.tensors.size());
  for (const auto& [name, t] : c.model) tensors.emplace_back(kModel + name, t);
  for (const auto& [name, t] : c.optimizer.tensors) tensors.emplace_back(kOptim + name, t);
  io::Metadata meta;  // (save_safetensors adds the checksum over all of it)
  meta["ingot_checkpoint"] = "2";
  meta["epoch"] = std::to_string(c.position.epoch);
  meta["batch"] = std::to_string(c.position.batch);
  meta["step"] = std::to_string(c.position.step);
  meta["rng_seed"] = std::to_string(c.position.rng.seed);
  meta["rng_offset"] = std::to_string(c.position.rng.offset);
  for (const auto& [key, value] : c.optimizer.scalars) meta[kOptim + key] = value;
  for (const auto& [key, value] : c.scaler) meta[kScaler + key] = value;
  for (const auto& [key, value] : c.selection) meta[kSelection + key] = value;
  io::save_safetensors(file, tensors, meta);
}

Checkpoint load_checkpoint(const std::filesystem::path& file) {
  io::SafetensorsFile f = io::load_safetensors(file);
  const auto format = f.metadata.find("ingot_checkpoint");
  if (format == f.metadata.end())
    throw InputError(fmt::format("{}: not an Ingot checkpoint (no 'ingot_checkpoint' metadata): to start from "
                                 "plain weights use init_from:",
                                 file.string()));
  if (format->second != "1" && format->second != "2")
    throw InputError(fmt::format("{}: checkpoint format '{}' is newer than this Ingot understands (1 and 2)",
                                 file.string(), printable(format->second)));
  Checkpoint c;
  c.note = verify(f, format->second, file);
  c.position.epoch = parse_number<int64_t>(f.metadata, "epoch", file);
  c.position.batch = parse_number<int64_t>(f.metadata, "batch", file);
  c.position.step = parse_number<int64_t>(f.metadata, "step", file);
  c.position.rng.seed = parse_number<uint64_t>(f.metadata, "rng_seed", file);
  c.position.rng.offset = parse_number<uint64_t>(f.metadata, "rng_offset", file);
  if (c.position.epoch < 0 || c.position.batch < 0 || c.position.step < 0)
    throw InputError(fmt::format("{}: checkpoint position is negative (epoch {}, batch {}, step {})", file.string(),
                                 c.position.epoch, c.position.batch, c.position.step));
  for (const std::string& name : f.order) {
    const Tensor& t = f.tensors.at(name);
    if (starts_with(name, kModel)) {
      c.model.emplace_back(name.substr(std::char_traits<char>::length(kModel)), t);
    } else if (starts_with(name, kOptim)) {
      c.optimizer.tensors.emplace(name.substr(std::char_traits<char>::length(kOptim)), t);
    } else {
      throw InputError(fmt::format("{}: unexpected tensor '{}' in a checkpoint", file.string(), printable(name)));
    }
  }
  // Checkpoints written before the loss scaler was recorded have no "scaler/" keys: an empty map.
  for (const auto& [key, value] : f.metadata) {
    if (starts_with(key, kOptim))
      c.optimizer.scalars.emplace(key.substr(std::char_traits<char>::length(kOptim)), value);
    if (starts_with(key, kScaler)) c.scaler.emplace(key.substr(std::char_traits<char>::length(kScaler)), value);
    if (starts_with(key, kSelection))
      c.selection.emplace(key.substr(std::char_traits<char>::length(kSelection)), value);
  }
  return c;
}

}  // namespace ingot::train
