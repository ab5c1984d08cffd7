// Private: what the image pack's reader and writer agree on — the file names in the pack's folder,
// the index file's header and the checksum of an image's bytes.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "ingot/data/image_pack.h"

namespace ingot::data::pack {

static_assert(std::endian::native == std::endian::little, "the pack's index is little-endian, read as it lies");
static_assert(sizeof(ImagePack::Record) == 32, "an index record is 32 bytes on disk");

inline constexpr const char* kIndexFile = "index.bin";  ///< header, then one Record per image
inline constexpr const char* kNamesFile = "names.txt";  ///< one file name per image, each ended by '\n'
inline constexpr char kIndexMagic[8] = {'I', 'N', 'G', 'O', 'T', 'P', 'I', 'X'};
inline constexpr uint64_t kIndexHeaderBytes = 16;  ///< the magic, then the image count (uint64)

/// "shard-00000.bin" for shard 0.
inline std::string shard_name(int64_t k) {
  std::string digits = std::to_string(k);
  if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
  return "shard-" + digits + ".bin";
}

/// zlib's CRC-32 of `bytes` (fed in pieces: crc32 takes at most a uInt at a time).
inline uint32_t crc32_of(std::span<const uint8_t> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < bytes.size();) {
    const auto n = static_cast<uInt>(std::min<size_t>(bytes.size() - at, size_t{1} << 30));
    crc = crc32(crc, bytes.data() + at, n);
    at += n;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace ingot::data::pack
