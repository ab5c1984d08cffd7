// Packed image shards: one split folder of the image_folder layout written by `ingot pack` as a few
// large files — the images' bytes concatenated in shards, an index (shard, offset, length, label,
// CRC32 per image), their file names and pack.json — and read back memory-mapped, so a streamed
// run opens a handful of files instead of one per image. Nothing about the pixels is checked when
// packing: a bad image stays bad and is met, as in the folder, when it is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ingot::data {

inline constexpr const char* kImagePackFormat = "ingot-image-pack";  ///< pack.json's "format"
inline constexpr int64_t kImagePackVersion = 1;                      ///< pack.json's "version"
inline constexpr const char* kImagePackHeader = "pack.json";         ///< written last: its presence marks a pack

/// True when `dir` holds a pack.json (a pack, whole or not; ImagePack checks the rest).
bool is_image_pack(const std::string& dir);
/// True when `dir` holds a pack's index or first shard but no pack.json: a packing that stopped
/// before the end.
bool is_unfinished_image_pack(const std::string& dir);

/// A pack opened read-only: pack.json, index and names read, shards mapped for as long as it lives.
/// Thread-safe to read from several loader workers.
class ImagePack {
 public:
  /// Opens and checks the pack in `dir`: pack.json's format and version, an index whose size is
  /// its count of images, names for each, and every record inside its shard. InputError, one line
  /// naming the file and saying to run `ingot pack` again, for any of these.
  explicit ImagePack(const std::filesystem::path& dir);
  ~ImagePack();
  ImagePack(const ImagePack&) = delete;
  ImagePack& operator=(const ImagePack&) = delete;

  const std::string& dir() const { return dir_; }
  int64_t size() const { return static_cast<int64_t>(records_.size()); }
  int64_t shards() const { return static_cast<int64_t>(maps_.size()); }
  /// The class folders of the packed split, in image_folder's (sorted) order.
  const std::vector<std::string>& class_names() const { return classes_; }
  /// The folder it was packed from, as given to `ingot pack`.
  const std::string& source() const { return source_; }
  int64_t label(int64_t i) const { return records_[static_cast<size_t>(i)].label; }
  /// Image `i`'s file name relative to the packed folder ("class_01/00003.jpg").
  std::string name(int64_t i) const;
  /// How messages name image `i`: "class_01/00003.jpg in pack DIR".
  std::string where(int64_t i) const;
  /// Image `i`'s bytes as they were in its file, mapped (valid while the pack lives). InputError
  /// naming the file and the pack when they no longer match the CRC32 packed with them.
  std::span<const uint8_t> bytes(int64_t i) const;
  /// Drops image `i`'s pages from this process's mapping once it is decoded (they stay in the page
  /// cache and come back on the next read): resident memory stays bounded by the images in
  /// flight, not by the shards read so far.
  void release(int64_t i) const;

  /// One image's entry in the index file (little-endian on disk, as it lies in memory).
  struct Record {
    uint64_t offset = 0;  ///< in its shard
    uint64_t length = 0;
    uint32_t shard = 0;
    uint32_t label = 0;
    uint32_t crc32 = 0;  ///< zlib's crc32 of the bytes
    uint32_t reserved = 0;
  };

 private:
  struct Mapping {
    std::string file;
    void* data = nullptr;
    size_t bytes = 0;
  };
  std::string dir_, source_;
  std::vector<std::string> classes_;
  std::vector<Record> records_;
  std::string names_;                 ///< every name, each ended by '\n'
  std::vector<uint64_t> name_start_;  ///< name i is names_[name_start_[i], name_start_[i + 1] - 1)
  std::vector<Mapping> maps_;
};

/// What `ingot pack` writes.
struct ImagePackOptions {
  /// A shard is closed before it would grow past this (an image larger than it has a shard of its own).
  int64_t shard_bytes = int64_t{1} << 30;
  bool force = false;          ///< replace the pack files already in the folder (other files stay)
  std::function<bool()> stop;  ///< asked between images; true stops the packing (interrupted)
};

/// What a pack holds, for the summary line.
struct ImagePackSummary {
  int64_t images = 0, classes = 0, shards = 0, bytes = 0;
};

/// Packs `folder` (one split in the image_folder layout: its class folders and files, listed as
/// image_folder lists them) into `dir`: shard-00000.bin ..., index.bin, names.txt, then pack.json
/// once everything else is on disk. InputError for a missing or empty folder, a `dir` that is not
/// empty (without `force`) or lies inside `folder`; Error naming the file and the OS reason when a
/// write fails (disk full), after removing what it wrote, so no partial pack is left behind.
ImagePackSummary write_image_pack(const std::string& folder, const std::filesystem::path& dir,
                                  const ImagePackOptions& options);

}  // namespace ingot::data
