// IDX reader and writer over zlib's gz* API, which reads gzip and plain files alike.
#include "ingot/data/idx.h"

#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <filesystem>
#include <memory>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

namespace ingot::data {
namespace {

constexpr int kMaxIdxDims = 8;
constexpr int64_t kMaxElements = int64_t{1} << 31;
constexpr unsigned kChunk = 1u << 20;          // bytes per gzread call
constexpr size_t kInitialReserve = 16u << 20;  // never trust the header for more than this up front

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

/// Bytes per element of a type code; 0 for an unknown code.
size_t type_size(uint8_t code) {
  switch (code) {
    case kIdxUbyte:
    case kIdxByte:
      return 1;
    case kIdxInt16:
      return 2;
    case kIdxInt32:
    case kIdxFloat32:
      return 4;
    case kIdxFloat64:
      return 8;
    default:
      return 0;
  }
}

/// Reverses each `size`-byte element (big-endian file <-> little-endian host).
void swap_elements(std::vector<uint8_t>& data, size_t size) {
  if (size <= 1 || std::endian::native == std::endian::big) return;
  for (size_t i = 0; i + size <= data.size(); i += size) std::reverse(data.begin() + i, data.begin() + i + size);
}

template <class T>
T element(const IdxArray& a, int64_t i) {
  T v;
  std::memcpy(&v, a.data.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

const char* idx_type_name(uint8_t code) {
  switch (code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "unknown";
  }
}

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path, what));
}

/// Reads up to `n` bytes; returns how many arrived. A zlib error other than a cut-off stream
/// (which the caller reports as truncation with the byte counts) is corrupt data.
size_t read_some(gzFile f, const std::string& path, uint8_t* dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    const unsigned want = static_cast<unsigned>(std::min<size_t>(n - got, kChunk));
    const int r = gzread(f, dst + got, want);
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      if (errnum == Z_BUF_ERROR) return got;  // "unexpected end of file"
      fail(path, fmt::format("corrupt gzip data (zlib: {}); re-download or reinstall the file", msg));
    }
    if (r == 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      if (errnum != Z_OK && errnum != Z_BUF_ERROR)
        fail(path, fmt::format("corrupt gzip data (zlib: {}); re-download or reinstall the file", msg));
      return got;
    }
    got += static_cast<size_t>(r);
  }
  return got;
}

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

IdxArray read_idx_impl(const std::string& path, const std::string& missing_hint, bool bytes_only) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    fail(path, fmt::format("file not found; {}", missing_hint.empty() ? "check the path" : missing_hint));
  }
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a folder, not an IDX file; give the file's path");
  InputFile file(path);  // (a FIFO or a device is refused, not read)
  GzHandle f(gzdopen(file.fd(), "rb"));
  if (!f) fail(path, "cannot be opened for reading; check its permissions");
  file.release();  // (gzclose closes it)
  gzbuffer(f.get(), 256 * 1024);

  const auto not_idx = [&](const std::string& why) {
    fail(path, fmt::format("not an IDX file: {}; expected an MNIST-format file (magic 0x00 0x00 0x08 NDIMS)", why));
  };
  uint8_t magic[4];
  const size_t got_magic = read_some(f.get(), path, magic, 4);
  if (got_magic < 4) not_idx(fmt::format("truncated header, {} of 4 magic bytes", got_magic));
  if (magic[0] != 0 || magic[1] != 0)
    not_idx(fmt::format("bad magic {:02x} {:02x} {:02x} {:02x}", magic[0], magic[1], magic[2], magic[3]));
  if (bytes_only && magic[2] != kIdxUbyte) {
    fail(path, fmt::format("IDX data type 0x{:02x} ({}) is not supported; only unsigned bytes (0x08) are", magic[2],
                           idx_type_name(magic[2])));
  }
  const size_t size = type_size(magic[2]);
  if (size == 0) not_idx(fmt::format("unknown data type 0x{:02x}", magic[2]));
  const int ndims = magic[3];
  if (ndims < 1 || ndims > kMaxIdxDims) not_idx(fmt::format("{} dimensions (1 to {} allowed)", ndims, kMaxIdxDims));

  uint8_t dim_bytes[4 * kMaxIdxDims];
  const size_t want_dims = 4 * static_cast<size_t>(ndims);
  const size_t got_dims = read_some(f.get(), path, dim_bytes, want_dims);
  if (got_dims < want_dims) {
    fail(path, fmt::format("truncated: header needs {} bytes of dimensions, got {}; re-download the file", want_dims,
                           got_dims));
  }
  IdxArray out;
  out.type = magic[2];
  int64_t elements = 1;
  for (int d = 0; d < ndims; ++d) {
    const int64_t size = big_endian_u32(dim_bytes + 4 * d);
    out.dims.push_back(size);
    // Checked before multiplying so the product cannot overflow.
    if (size > 0 && elements > kMaxElements / size) {
      fail(path,
           fmt::format("header dimensions {} hold 2^31 elements or more; the header is corrupt, re-download the file",
                       fmt::join(out.dims, "x")));
    }
    elements *= size;
  }
  if (elements >= kMaxElements) {
    fail(path,
         fmt::format("header dimensions {} hold 2^31 elements or more; the header is corrupt, re-download the file",
                     fmt::join(out.dims, "x")));
  }

  // The buffer grows with the data actually decompressed, so a lying header costs no memory.
  const size_t expected = static_cast<size_t>(elements) * size;
  out.data.reserve(std::min(expected, kInitialReserve));
  size_t have = 0;
  while (have < expected) {
    const size_t step = std::min<size_t>(expected - have, kChunk);
    // Doubling, capped at the announced size, so a valid file ends with an exact-size buffer.
    if (have + step > out.data.capacity()) out.data.reserve(std::min(expected, 2 * out.data.capacity()));
    out.data.resize(have + step);
    const size_t got = read_some(f.get(), path, out.data.data() + have, step);
    have += got;
    if (got < step) {
      fail(path, fmt::format("truncated: expected {} bytes of data, got {} (dims {}); re-download the file", expected,
                             have, fmt::join(out.dims, "x")));
    }
  }
  uint8_t extra[64];
  const size_t trailing = read_some(f.get(), path, extra, sizeof extra);
  if (trailing > 0) {
    fail(
        path,
        fmt::format(
            "{}{} bytes after the {} bytes of data the header (dims {}) announces; the file is corrupt, re-download it",
            trailing == sizeof extra ? "at least " : "", trailing, expected, fmt::join(out.dims, "x")));
  }
  swap_elements(out.data, size);
  return out;
}

}  // namespace

int64_t IdxArray::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

IdxArray read_idx(const std::string& path, const std::string& missing_hint) {
  return read_idx_impl(path, missing_hint, true);
}

IdxArray read_idx_any(const std::string& path, const std::string& missing_hint) {
  return read_idx_impl(path, missing_hint, false);
}

namespace {

/// Every element of `a` as T, whatever its IDX type.
template <class T>
std::vector<T> idx_values(const IdxArray& a) {
  const int64_t n = a.numel();
  std::vector<T> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    T& v = out[static_cast<size_t>(i)];
    switch (a.type) {
      case kIdxUbyte:
        v = static_cast<T>(a.data[static_cast<size_t>(i)]);
        break;
      case kIdxByte:
        v = static_cast<T>(element<int8_t>(a, i));
        break;
      case kIdxInt16:
        v = static_cast<T>(element<int16_t>(a, i));
        break;
      case kIdxInt32:
        v = static_cast<T>(element<int32_t>(a, i));
        break;
      case kIdxFloat32:
        v = static_cast<T>(element<float>(a, i));
        break;
      default:
        v = static_cast<T>(element<double>(a, i));
        break;
    }
  }
  return out;
}

}  // namespace

std::vector<float> idx_floats(const IdxArray& a) { return idx_values<float>(a); }

std::vector<float> idx_sample_values(const IdxArray& a) {
  std::vector<float> v = idx_floats(a);
  if (a.type == kIdxUbyte)
    for (float& x : v) x /= 255.0f;
  return v;
}

std::vector<int64_t> idx_integers(const IdxArray& a, const std::string& path) {
  INGOT_CHECK_AS(a.type != kIdxFloat32 && a.type != kIdxFloat64, InputError,
                 "{}: holds {} values, but class numbers must be integers (IDX type 0x08 or 0x0C)", path,
                 idx_type_name(a.type));
  return idx_values<int64_t>(a);
}

void write_idx(const std::string& path, const IdxArray& array, bool gzip) {
  const size_t size = type_size(array.type);
  INGOT_CHECK(size > 0 && !array.dims.empty() && array.dims.size() <= kMaxIdxDims &&
                  array.numel() * static_cast<int64_t>(size) == static_cast<int64_t>(array.data.size()),
              "write_idx: {}: dims {} of {} do not match {} bytes of data", path, fmt::join(array.dims, "x"),
              idx_type_name(array.type), array.data.size());
  std::vector<uint8_t> bytes = {0, 0, array.type, static_cast<uint8_t>(array.dims.size())};
  for (int64_t d : array.dims) {
    const auto v = static_cast<uint32_t>(d);
    bytes.insert(bytes.end(), {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                               static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)});
  }
  std::vector<uint8_t> data = array.data;
  swap_elements(data, size);
  bytes.insert(bytes.end(), data.begin(), data.end());
  GzHandle f(gzopen(path.c_str(), gzip ? "wb6" : "wbT"));
  INGOT_CHECK_AS(f != nullptr, InputError, "{}: cannot be opened for writing; check the folder exists and is writable",
                 path);
  size_t done = 0;
  while (done < bytes.size()) {
    const unsigned n = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, kChunk));
    INGOT_CHECK_AS(gzwrite(f.get(), bytes.data() + done, n) == static_cast<int>(n), InputError,
                   "{}: write failed; check free disk space", path);
    done += n;
  }
  INGOT_CHECK_AS(gzclose(f.release()) == Z_OK, InputError, "{}: closing failed; check free disk space", path);
}

}  // namespace ingot::data
