// .npz reader: the zip central directory (zip64 sizes included) located from its end record, one
// member's local header, then its data stored or raw-deflated (zlib), checked against its CRC-32.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <climits>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/data/npy.h"

namespace ingot::data {
namespace {

constexpr uint32_t kEndRecord = 0x06054b50, kCentralEntry = 0x02014b50, kLocalHeader = 0x04034b50;
constexpr uint32_t kZip64Marker = 0xFFFFFFFFu;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path, what));
}

/// Little-endian reads, bounds-checked against the file: a short file is a damaged zip.
struct Reader {
  const std::vector<uint8_t>& bytes;
  const std::string& path;

  uint64_t le(size_t at, int n) const {
    if (at + static_cast<size_t>(n) > bytes.size() || at + static_cast<size_t>(n) < at)
      fail(path, "truncated or damaged zip (a record runs past the end of the file); re-save it with numpy.savez");
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | bytes[at + static_cast<size_t>(i)];
    return v;
  }
  uint32_t u16(size_t at) const { return static_cast<uint32_t>(le(at, 2)); }
  uint32_t u32(size_t at) const { return static_cast<uint32_t>(le(at, 4)); }
};

struct Member {
  std::string name;
  uint32_t method = 0, flags = 0, crc = 0;
  uint64_t compressed = 0, size = 0, local_offset = 0;
};

/// Offset of the end-of-central-directory record: the last signature within comment range.
size_t find_end_record(const Reader& r) {
  const size_t n = r.bytes.size();
  if (n < 22) fail(r.path, "not a zip file (too short for an .npz); save it with numpy.savez");
  const size_t lowest = n > 22 + 65535 ? n - 22 - 65535 : 0;
  for (size_t at = n - 22 + 1; at-- > lowest;)
    if (r.u32(at) == kEndRecord) return at;
  fail(r.path, "not a zip file (no end-of-central-directory record): truncated, or not an .npz");
}

/// Replaces the 0xFFFFFFFF fields of `m` from the zip64 extra field (id 1) of its central entry.
void apply_zip64(const Reader& r, size_t extra, size_t extra_len, Member& m) {
  for (size_t p = extra; p + 4 <= extra + extra_len;) {
    const uint32_t id = r.u16(p), len = r.u16(p + 2);
    if (id == 1) {
      size_t q = p + 4;
      if (m.size == kZip64Marker) m.size = r.le(q, 8), q += 8;
      if (m.compressed == kZip64Marker) m.compressed = r.le(q, 8), q += 8;
      if (m.local_offset == kZip64Marker) m.local_offset = r.le(q, 8);
      return;
    }
    p += 4 + len;
  }
}

std::vector<Member> central_directory(const Reader& r) {
  const size_t end = find_end_record(r);
  const uint32_t count = r.u16(end + 10);
  const uint64_t offset = r.u32(end + 16);
  if (count == 0xFFFF || offset == kZip64Marker)
    fail(r.path, "zip64 archives with over 65535 members or 4 GiB of data are not supported");
  std::vector<Member> members;
  size_t p = static_cast<size_t>(offset);
  for (uint32_t i = 0; i < count; ++i) {
    if (r.u32(p) != kCentralEntry) fail(r.path, "damaged zip: bad central directory entry; re-save it");
    Member m;
    m.flags = r.u16(p + 8);
    m.method = r.u16(p + 10);
    m.crc = r.u32(p + 16);
    m.compressed = r.u32(p + 20);
    m.size = r.u32(p + 24);
    const size_t name_len = r.u16(p + 28), extra_len = r.u16(p + 30), comment_len = r.u16(p + 32);
    m.local_offset = r.u32(p + 42);
    if (p + 46 + name_len > r.bytes.size()) fail(r.path, "damaged zip: a member name runs past the end");
    m.name.assign(reinterpret_cast<const char*>(r.bytes.data() + p + 46), name_len);
    apply_zip64(r, p + 46 + name_len, extra_len, m);
    members.push_back(std::move(m));
    p += 46 + name_len + extra_len + comment_len;
  }
  return members;
}

std::vector<uint8_t> inflate_raw(const Reader& r, const uint8_t* src, const Member& m) {
  std::vector<uint8_t> out(static_cast<size_t>(m.size));
  z_stream s{};
  if (inflateInit2(&s, -MAX_WBITS) != Z_OK) fail(r.path, "zlib could not start inflating");
  s.next_in = const_cast<Bytef*>(src);
  s.avail_in = static_cast<uInt>(m.compressed);
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&s, Z_FINISH);
  const uint64_t produced = s.total_out;
  inflateEnd(&s);
  if (rc != Z_STREAM_END || produced != m.size)
    fail(r.path, fmt::format("member '{}': corrupt or truncated deflate data ({} of {} bytes); re-save the file",
                             printable(m.name), produced, m.size));
  return out;
}

}  // namespace

NpyArray read_npz(const std::string& path, const std::string& key) {
  // A regular file only, read to the size it has (a FIFO or a device is refused, not read).
  const InputFile file(path, "check the path (relative paths start at the working directory)");
  std::vector<uint8_t> bytes(static_cast<size_t>(file.size()));
  file.read_at(bytes.data(), bytes.size(), 0);
  const Reader r{bytes, path};
  const std::vector<Member> members = central_directory(r);
  const Member* m = nullptr;
  std::vector<std::string> names;
  for (const Member& each : members) {
    std::string name = each.name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    if (name == key) m = &each;
    names.push_back(printable(name));
  }
  if (m == nullptr)
    fail(path, fmt::format("no array '{}' in the .npz; it holds: {}", printable(key), fmt::join(names, ", ")));
  if (m->flags & 1u) fail(path, fmt::format("member '{}' is encrypted; save it with numpy.savez", printable(m->name)));
  if (m->method != 0 && m->method != 8)
    fail(path, fmt::format("member '{}' uses zip compression method {}; only stored (0) and deflate (8) are "
                           "supported (numpy.savez / savez_compressed)",
                           printable(m->name), m->method));
  if (m->size > UINT_MAX || m->compressed > UINT_MAX)
    fail(path, fmt::format("member '{}' is over 4 GiB; split the data into smaller files", printable(m->name)));
  const size_t local = static_cast<size_t>(m->local_offset);
  if (r.u32(local) != kLocalHeader)
    fail(path, fmt::format("damaged zip: no local header for '{}'", printable(m->name)));
  const size_t data_at = local + 30 + r.u16(local + 26) + r.u16(local + 28);
  if (data_at + m->compressed > bytes.size() || data_at > bytes.size())
    fail(path,
         fmt::format("truncated: member '{}' needs {} bytes, the file ends first", printable(m->name), m->compressed));
  // Deflate expands at most about 1032 to 1: a larger claim is a damaged size, refused before the
  // buffer for it is allocated.
  if (m->method == 8 && m->size / 1032 > m->compressed + 1)
    fail(path, fmt::format("damaged zip: member '{}' claims {} bytes from {} compressed, more than deflate can give",
                           printable(m->name), m->size, m->compressed));
  const uint8_t* src = bytes.data() + data_at;
  std::vector<uint8_t> member =
      m->method == 0 ? std::vector<uint8_t>(src, src + m->compressed) : inflate_raw(r, src, *m);
  if (m->method == 0 && m->compressed != m->size)
    fail(path, fmt::format("damaged zip: stored member '{}' has sizes {} and {}", printable(m->name), m->compressed,
                           m->size));
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t done = 0; done < member.size();) {
    const size_t chunk = std::min<size_t>(member.size() - done, UINT_MAX);
    crc = crc32(crc, member.data() + done, static_cast<uInt>(chunk));
    done += chunk;
  }
  if (static_cast<uint32_t>(crc) != m->crc)
    fail(path, fmt::format("member '{}' fails its CRC-32 check; the file is damaged", printable(m->name)));
  return parse_npy(member, fmt::format("{} (member '{}')", path, printable(m->name)));
}

}  // namespace ingot::data
