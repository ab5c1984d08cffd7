// ImagePack: pack.json checked first (format, version), then the index and names against its
// count, then each shard mapped and every record proven inside it — so a truncated or mismatched
// pack is one line at start, not a fault in a loader worker. Bytes are checked against their
// CRC32 on every read (a few percent of a decode), so a shard damaged later is met like a corrupt
// file.
#include "ingot/data/image_pack.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "image_pack_format.h"
#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

namespace fs = std::filesystem;

namespace ingot::data {
namespace {

constexpr uint64_t kMaxHeaderBytes = 64 << 20;  // pack.json: class names and shard names only

}  // namespace

bool is_image_pack(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(fs::path(dir) / kImagePackHeader, ec);
}

bool is_unfinished_image_pack(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && !is_image_pack(dir) &&
         (fs::is_regular_file(fs::path(dir) / pack::kIndexFile, ec) ||
          fs::is_regular_file(fs::path(dir) / pack::shard_name(0), ec));
}

ImagePack::ImagePack(const fs::path& dir) : dir_(dir.string()) {
  const std::string header_file = (dir / kImagePackHeader).string();
  std::string again = fmt::format("write it again with ingot pack FOLDER -o {}", dir_);
  const std::string text =
      read_file(dir / kImagePackHeader, kMaxHeaderBytes, "an image pack's header", "write the pack with " + again);
  std::vector<std::string> shard_files;
  uint64_t images = 0;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    const std::string format = j.value("format", std::string());
    if (format != kImagePackFormat)
      throw InputError(fmt::format("{}: format '{}', not an image pack ({}); {}", header_file, printable(format),
                                   kImagePackFormat, again));
    const int64_t version = j.at("version").get<int64_t>();
    if (version != kImagePackVersion)
      throw InputError(fmt::format("{}: image pack version {}, but this ingot reads version {}; {} using this ingot",
                                   header_file, version, kImagePackVersion, again));
    source_ = j.at("source").get<std::string>();
    classes_ = j.at("classes").get<std::vector<std::string>>();
    images = j.at("images").get<uint64_t>();
    shard_files = j.at("shards").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a readable image pack header ({}); {}", header_file, e.what(), again));
  }
  again = fmt::format("write it again with ingot pack {} -o {}", source_, dir_);
  INGOT_CHECK_AS(!classes_.empty() && images > 0, InputError, "{}: {} images of {} classes; {}", header_file, images,
                 classes_.size(), again);
  for (const std::string& s : shard_files)
    INGOT_CHECK_AS(!s.empty() && s.find('/') == std::string::npos, InputError,
                   "{}: shard '{}' is not a file name in the pack's folder; {}", header_file, printable(s), again);

  // The index: its size must be exactly the header and one record per image.
  const InputFile index(dir / pack::kIndexFile, again);
  const uint64_t expected = pack::kIndexHeaderBytes + images * sizeof(Record);
  char magic[8];
  uint64_t count = 0;
  if (index.size() >= pack::kIndexHeaderBytes) {
    index.read_at(magic, sizeof magic, 0);
    index.read_at(&count, sizeof count, sizeof magic);
  }
  if (index.size() < pack::kIndexHeaderBytes || std::memcmp(magic, pack::kIndexMagic, sizeof magic) != 0)
    throw InputError(fmt::format("{}: not the index of an image pack (no {} header); {}", index.where(),
                                 std::string(pack::kIndexMagic, sizeof magic), again));
  if (count != images || index.size() != expected)
    throw InputError(
        fmt::format("{}: {} bytes counting {} images, but pack.json has {} images ({} bytes); the pack "
                    "is truncated or mixed from two packs: {}",
                    index.where(), index.size(), count, images, expected, again));
  records_.resize(images);
  index.read_at(records_.data(), images * sizeof(Record), pack::kIndexHeaderBytes);

  // The names: one line per image.
  names_ = read_file(dir / pack::kNamesFile, uint64_t{1} << 40, "an image pack's names", again);
  name_start_.reserve(images + 1);
  name_start_.push_back(0);
  for (size_t at = 0; at < names_.size(); ++at)
    if (names_[at] == '\n') name_start_.push_back(at + 1);
  if (name_start_.size() != images + 1 || name_start_.back() != names_.size())
    throw InputError(fmt::format("{}: {} names for the {} images of pack.json; {}", (dir / pack::kNamesFile).string(),
                                 name_start_.size() - 1, images, again));

  // The shards, mapped; every record inside its shard.
  for (const std::string& s : shard_files) {
    const InputFile in(dir / s, "the pack lost a shard: " + again);
    Mapping m{in.where(), nullptr, static_cast<size_t>(in.size())};
    if (m.bytes > 0) {
      m.data = mmap(nullptr, m.bytes, PROT_READ, MAP_PRIVATE, in.fd(), 0);
      if (m.data == MAP_FAILED)
        throw InputError(fmt::format("{}: cannot map the shard into memory: {}", m.file, std::strerror(errno)));
    }
    maps_.push_back(std::move(m));
  }
  for (size_t i = 0; i < records_.size(); ++i) {
    const Record& r = records_[i];
    if (r.label >= classes_.size())
      throw InputError(fmt::format("{}: image {} ({}) has label {}, but the pack has {} classes; {}", index.where(), i,
                                   name(static_cast<int64_t>(i)), r.label, classes_.size(), again));
    if (r.shard >= maps_.size())
      throw InputError(fmt::format("{}: image {} ({}) lies in shard {}, but pack.json lists {} shards; {}",
                                   index.where(), i, name(static_cast<int64_t>(i)), r.shard, maps_.size(), again));
    const Mapping& m = maps_[r.shard];
    if (r.offset > m.bytes || r.length > m.bytes - r.offset)
      throw InputError(
          fmt::format("{}: {} bytes, but image {} ({}) lies at bytes {}..{} of it: the shard is "
                      "truncated; {}",
                      m.file, m.bytes, i, name(static_cast<int64_t>(i)), r.offset, r.offset + r.length, again));
  }
}

ImagePack::~ImagePack() {
  for (const Mapping& m : maps_)
    if (m.data != nullptr) munmap(m.data, m.bytes);
}

std::string ImagePack::name(int64_t i) const {
  const size_t at = static_cast<size_t>(i);
  return names_.substr(name_start_[at], name_start_[at + 1] - 1 - name_start_[at]);
}

void ImagePack::release(int64_t i) const {
  if (i < 0 || i >= size()) return;
  const Record& r = records_[static_cast<size_t>(i)];
  const Mapping& m = maps_[r.shard];
  if (r.length == 0 || m.data == nullptr) return;
  static const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t begin = r.offset / page * page;
  const uint64_t end = std::min<uint64_t>((r.offset + r.length + page - 1) / page * page, m.bytes);
  // read-only file pages: dropping them is always safe (a neighbour's read faults them back in)
  (void)madvise(static_cast<uint8_t*>(m.data) + begin, end - begin, MADV_DONTNEED);
}

std::string ImagePack::where(int64_t i) const { return fmt::format("{} in pack {}", name(i), dir_); }

std::span<const uint8_t> ImagePack::bytes(int64_t i) const {
  INGOT_CHECK(i >= 0 && i < size(), "{}: image {} outside [0, {})", dir_, i, size());
  const Record& r = records_[static_cast<size_t>(i)];
  if (r.length == 0) return {};  // an empty file: decoding says so
  const Mapping& m = maps_[r.shard];
  const std::span<const uint8_t> out(static_cast<const uint8_t*>(m.data) + r.offset, r.length);
  if (pack::crc32_of(out) != r.crc32)
    throw InputError(
        fmt::format("{}: its bytes in {} no longer match the CRC32 packed with them (the shard was "
                    "damaged or changed); write the pack again with ingot pack {} -o {}",
                    where(i), m.file, source_, dir_));
  return out;
}

}  // namespace ingot::data
