// write_image_pack: list the folder as image_folder does, copy each file's bytes into shards of
// at most shard_bytes (a file is never split), then the index and names, and pack.json last: each
// file is written atomically and synced, so a folder with a pack.json holds a whole pack, and a
// pack that fails half-way is removed again.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "image_pack_format.h"
#include "ingot/base/error.h"
#include "ingot/data/image_decode.h"
#include "ingot/data/image_folder.h"
#include "ingot/data/image_pack.h"
#include "ingot/io/atomic_write.h"

namespace fs = std::filesystem;

namespace ingot::data {
namespace {

constexpr const char* kWhere = "ingot pack";

bool is_pack_file(const std::string& name) {
  return name == kImagePackHeader || name == pack::kIndexFile || name == pack::kNamesFile ||
         (name.starts_with("shard-") && name.ends_with(".bin"));
}

/// True when `inner` is `outer` or lies below it (both made absolute, links resolved).
bool inside(const fs::path& inner, const fs::path& outer) {
  const fs::path a = fs::weakly_canonical(inner), b = fs::weakly_canonical(outer);
  const auto [end, _] = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  return end == b.end();
}

/// Makes `dir` ready for a pack: created when missing; refused when it holds anything, unless
/// `force`, which removes an earlier pack (pack.json first, so it never marks a half pack).
void prepare_folder(const fs::path& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(fmt::format("{}: -o {} is a file, not a folder; choose another -o", kWhere, dir.string()));
  if (!fs::create_directories(dir, ec) && ec)
    throw Error(fmt::format("{}: cannot create {}: {}; check the path and its permissions", kWhere, dir.string(),
                            ec.message()));
  std::vector<std::string> there;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) there.push_back(e.path().filename().string());
  std::sort(there.begin(), there.end());
  if (there.empty()) return;
  if (!force)
    throw InputError(
        fmt::format("{}: {} is not empty ({}{}); pass --force to replace the pack in it, or choose an "
                    "empty or new folder for -o",
                    kWhere, dir.string(), there[0], there.size() > 1 ? ", ..." : ""));
  fs::remove(dir / kImagePackHeader);
  for (const std::string& name : there)
    if (is_pack_file(name)) fs::remove(dir / name);
}

/// Sums the files' sizes, for the space check and the summary's estimate.
uint64_t total_bytes(const std::vector<std::string>& files) {
  uint64_t sum = 0;
  std::error_code ec;
  for (const std::string& f : files) {
    const uintmax_t n = fs::file_size(f, ec);
    if (!ec) sum += n;
  }
  return sum;
}

}  // namespace

ImagePackSummary write_image_pack(const std::string& folder, const fs::path& dir, const ImagePackOptions& o) {
  INGOT_CHECK_AS(o.shard_bytes >= 1, ConfigError, "{}: shard size {} bytes: give at least 1 MB", kWhere, o.shard_bytes);
  const ImageFolderListing listing = list_image_folder(folder, kWhere);
  if (inside(dir, folder))
    throw InputError(
        fmt::format("{}: -o {} lies inside {}, where image_folder would read it as a class; choose a "
                    "folder outside it",
                    kWhere, dir.string(), folder));
  std::string names;
  for (const std::string& f : listing.files) {
    const std::string name = fs::path(f).lexically_relative(folder).generic_string();
    if (name.find('\n') != std::string::npos)
      throw InputError(
          fmt::format("{}: {}: a file name with a line break cannot be packed; rename the file", kWhere, f));
    names += name + '\n';
  }
  const uint64_t needed = total_bytes(listing.files);
  prepare_folder(dir, o.force);
  std::error_code ec;
  const fs::space_info space = fs::space(dir, ec);
  if (!ec && space.available < needed + names.size())
    throw Error(fmt::format(
        "{}: {} has {:.1f} MB free but the pack needs {:.1f} MB; free space there or choose "
        "another -o",
        kWhere, dir.string(), static_cast<double>(space.available) / 1e6, static_cast<double>(needed) / 1e6));

  const size_t n = listing.files.size();
  std::vector<ImagePack::Record> records(n);
  std::vector<std::string> shards;
  std::vector<fs::path> written;  // removed again when packing fails
  uint64_t bytes_written = 0;
  try {
    // The next image's bytes are read before its shard is chosen: a shard is closed when they
    // would take it past shard_bytes (a shard holds at least one image, however large).
    const auto read = [&](size_t i) {
      if (o.stop && o.stop())
        throw Error(fmt::format("{}: interrupted; the files written so far were removed: run it again", kWhere));
      return read_image_file(listing.files[i]);
    };
    std::vector<uint8_t> bytes = read(0);
    for (size_t i = 0; i < n;) {
      shards.push_back(pack::shard_name(static_cast<int64_t>(shards.size())));
      written.push_back(dir / shards.back());
      io::atomic_write(written.back(), [&](io::ByteSink& out) {
        while (i < n && (out.written() == 0 || out.written() + bytes.size() <= static_cast<uint64_t>(o.shard_bytes))) {
          ImagePack::Record& r = records[i];
          r.shard = static_cast<uint32_t>(shards.size() - 1);
          r.offset = out.written();
          r.length = bytes.size();
          r.label = static_cast<uint32_t>(listing.labels[i]);
          r.crc32 = pack::crc32_of(bytes);
          out.write(bytes.data(), bytes.size());
          bytes_written += bytes.size();
          if (++i < n) bytes = read(i);
        }
      });
    }
    written.push_back(dir / pack::kIndexFile);
    io::atomic_write(written.back(), [&](io::ByteSink& out) {
      const uint64_t count = n;
      out.write(pack::kIndexMagic, sizeof pack::kIndexMagic);
      out.write(&count, sizeof count);
      out.write(records.data(), records.size() * sizeof(ImagePack::Record));
    });
    written.push_back(dir / pack::kNamesFile);
    io::atomic_write(written.back(), names);
    nlohmann::ordered_json j;
    j["format"] = kImagePackFormat;
    j["version"] = kImagePackVersion;
    j["source"] = fs::absolute(folder).lexically_normal().string();
    j["classes"] = listing.classes;
    j["images"] = n;
    j["bytes"] = bytes_written;
    j["index"] = pack::kIndexFile;
    j["names"] = pack::kNamesFile;
    j["shards"] = shards;
    io::atomic_write(dir / kImagePackHeader, j.dump(2) + "\n");  // last: it marks the pack whole
  } catch (const Error& e) {
    for (const fs::path& f : written) fs::remove(f, ec);
    if (dynamic_cast<const InputError*>(&e) != nullptr || std::string_view(e.what()).starts_with(kWhere)) throw;
    throw Error(
        fmt::format("{}: {}; free space there (the pack needs {:.1f} MB) or choose another -o, then run "
                    "ingot pack again (what was written is removed)",
                    kWhere, e.what(), static_cast<double>(needed) / 1e6));
  }
  return {static_cast<int64_t>(n), static_cast<int64_t>(listing.classes.size()), static_cast<int64_t>(shards.size()),
          static_cast<int64_t>(bytes_written)};
}

}  // namespace ingot::data
