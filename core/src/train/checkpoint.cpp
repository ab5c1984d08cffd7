// Checkpoint files: one safetensors file with prefixed tensor names and string metadata.
#include "ingot/train/checkpoint.h"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <charconv>

#include "ingot/base/error.h"
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
    throw InputError(fmt::format("{}: checkpoint field '{}' is not a number: '{}'", file.string(), key, it->second));
  return value;
}

/// CRC-32 (zlib's) over every tensor's name and bytes, in name order: any flipped bit in the data
/// section changes it.
std::string data_checksum(const std::map<std::string, Tensor>& tensors) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const auto& [name, t] : tensors) {
    const Tensor c = t.strided().to(Device::cpu()).contiguous();
    crc = crc32(crc, reinterpret_cast<const Bytef*>(name.data()), static_cast<uInt>(name.size()));
    const auto* p = static_cast<const Bytef*>(c.storage()->data()) + c.offset() * dtype_size(c.dtype());
    size_t left = static_cast<size_t>(c.numel()) * dtype_size(c.dtype());
    while (left > 0) {  // crc32 takes at most uInt bytes at a time
      const auto n = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
      crc = crc32(crc, p, n);
      p += n;
      left -= n;
    }
  }
  return fmt::format("{:08x}", static_cast<uint32_t>(crc));
}

}  // namespace

void save_checkpoint(const std::filesystem::path& file, const Checkpoint& c) {
  io::NamedTensors tensors;
  tensors.reserve(c.model.size() + c.optimizer.tensors.size());
  for (const auto& [name, t] : c.model) tensors.emplace_back(kModel + name, t);
  for (const auto& [name, t] : c.optimizer.tensors) tensors.emplace_back(kOptim + name, t);
  io::Metadata meta;
  meta["ingot_checkpoint"] = "1";
  meta["data_crc32"] = data_checksum(std::map<std::string, Tensor>(tensors.begin(), tensors.end()));
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
  if (format->second != "1")
    throw InputError(fmt::format("{}: checkpoint format {} is newer than this Ingot understands (1)", file.string(),
                                 format->second));
  // Checkpoints written before checksums were recorded have none and are taken as they are.
  if (const auto crc = f.metadata.find("data_crc32"); crc != f.metadata.end()) {
    const std::string actual = data_checksum(f.tensors);
    if (actual != crc->second)
      throw InputError(fmt::format("{}: the checkpoint's data is damaged (CRC-32 {} where {} was recorded): resume "
                                   "from an older checkpoint, or start over with --force",
                                   file.string(), actual, crc->second));
  }
  Checkpoint c;
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
      throw InputError(fmt::format("{}: unexpected tensor '{}' in a checkpoint", file.string(), name));
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
