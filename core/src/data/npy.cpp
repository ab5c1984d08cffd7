// .npy reader: magic, version, the Python-literal header dict (descr, fortran_order, shape), data.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/data/npy.h"

namespace ingot::data {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 31;
constexpr char kMagic[] = "\x93NUMPY";

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw InputError(fmt::format("{}: {}", source, what));
}

/// The text after `'key':` in the header dict, leading spaces skipped ("" when absent).
std::string value_of(const std::string& header, const std::string& key, const std::string& source) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) fail(source, fmt::format("not a .npy file: the header has no '{}'", key));
  size_t p = header.find(':', at);
  if (p == std::string::npos) fail(source, fmt::format("not a .npy file: bad header near '{}'", key));
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  return header.substr(p);
}

void parse_descr(const std::string& value, NpyArray& a, const std::string& source) {
  if (value.empty() || (value[0] != '\'' && value[0] != '"'))
    fail(source, "unsupported dtype (a structured array?); save a plain numeric array");
  const size_t end = value.find(value[0], 1);
  if (end == std::string::npos) fail(source, "not a .npy file: unterminated 'descr'");
  const std::string descr = value.substr(1, end - 1);
  const auto unsupported = [&] {
    fail(source, fmt::format("unsupported dtype '{}'; use float32, float64, uint8 or a little-endian integer "
                             "type (x.astype(...))",
                             printable(descr)));
  };
  if (descr.size() < 3) unsupported();
  const char order = descr[0], kind = descr[1];
  int size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || size > 100) unsupported();
    size = size * 10 + (descr[i] - '0');
  }
  const bool known = (kind == 'f' && (size == 4 || size == 8)) ||
                     ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                     (kind == 'b' && size == 1);
  if (!known) unsupported();
  if (order == '>' && size > 1)
    fail(source, fmt::format("big-endian dtype '{}' is not supported; save it as '<{}{}' (x.astype('<{}{}'))", descr,
                             kind, size, kind, size));
  if (order != '<' && order != '|' && order != '=' && order != '>') unsupported();
  a.kind = kind;
  a.itemsize = size;
}

void parse_shape(const std::string& value, NpyArray& a, const std::string& source) {
  if (value.empty() || value[0] != '(') fail(source, "not a .npy file: 'shape' is not a tuple");
  const size_t end = value.find(')');
  if (end == std::string::npos) fail(source, "not a .npy file: unterminated 'shape'");
  int64_t elements = 1;
  int64_t dim = -1;
  for (size_t i = 1; i <= end; ++i) {
    const char ch = value[i];
    if (ch >= '0' && ch <= '9') {
      dim = (dim < 0 ? 0 : dim) * 10 + (ch - '0');
      if (dim > kMaxElements) fail(source, "shape has a dim over 2^31; the array is too large");
    } else if (ch == ',' || ch == ')') {
      if (dim >= 0) {
        a.shape.push_back(dim);
        elements *= dim;
        if (elements > kMaxElements) fail(source, "the array has over 2^31 elements; it is too large");
      }
      dim = -1;
    } else if (ch != ' ' && ch != 'L') {
      fail(source, fmt::format("not a .npy file: bad 'shape' {}", printable(value.substr(0, end + 1))));
    }
  }
}

/// Where the header dict lies: after the magic, the version and the length field.
struct HeaderSpan {
  size_t offset = 0;
  size_t length = 0;
};

/// Reads magic, version and header length from the first `n` bytes of a file of `total` bytes.
HeaderSpan header_span(const uint8_t* bytes, size_t n, uint64_t total, const std::string& source) {
  if (n < 10 || std::memcmp(bytes, kMagic, 6) != 0)
    fail(source, "not a .npy file (no \\x93NUMPY magic); save the array with numpy.save");
  const int major = bytes[6];
  HeaderSpan span;
  if (major == 1) {
    span.length = size_t{bytes[8]} | (size_t{bytes[9]} << 8);
    span.offset = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12) fail(source, "truncated .npy header");
    span.length = size_t{bytes[8]} | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    span.offset = 12;
  } else {
    fail(source, fmt::format(".npy format version {} is not supported (1, 2 and 3 are)", major));
  }
  if (total < span.offset + span.length)
    fail(source,
         fmt::format("truncated: the header needs {} bytes, the file has {}", span.offset + span.length, total));
  return span;
}

/// descr, fortran_order and shape of the header dict.
NpyArray parse_header(const std::string& header, const std::string& source) {
  NpyArray a;
  parse_descr(value_of(header, "descr", source), a, source);
  const std::string fortran = value_of(header, "fortran_order", source);
  if (fortran.rfind("True", 0) == 0)
    fail(source, "fortran_order arrays are not supported; save numpy.ascontiguousarray(x)");
  if (fortran.rfind("False", 0) != 0) fail(source, "not a .npy file: bad 'fortran_order'");
  parse_shape(value_of(header, "shape", source), a, source);
  return a;
}

/// The data after the header (`got` bytes) must be exactly what the shape and dtype need.
void check_data_size(const NpyArray& a, uint64_t got, const std::string& source) {
  const uint64_t expected = static_cast<uint64_t>(a.numel()) * static_cast<uint64_t>(a.itemsize);
  if (got < expected)
    fail(source, fmt::format("truncated: shape ({}) of {} needs {} bytes of data, the file has {}",
                             fmt::join(a.shape, ", "), a.dtype_name(), expected, got));
  if (got > expected)
    fail(source, fmt::format("{} bytes after the data of shape ({}); the file is damaged", got - expected,
                             fmt::join(a.shape, ", ")));
}

}  // namespace

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string NpyArray::dtype_name() const {
  switch (kind) {
    case 'f':
      return fmt::format("float{}", itemsize * 8);
    case 'i':
      return fmt::format("int{}", itemsize * 8);
    case 'u':
      return fmt::format("uint{}", itemsize * 8);
    default:
      return "bool";
  }
}

NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& source) {
  const HeaderSpan span = header_span(bytes.data(), bytes.size(), bytes.size(), source);
  NpyArray a =
      parse_header(std::string(reinterpret_cast<const char*>(bytes.data() + span.offset), span.length), source);
  const size_t data_at = span.offset + span.length;
  check_data_size(a, bytes.size() - data_at, source);
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_at), bytes.end());
  return a;
}

NpyArray read_npy(const std::string& path) {
  // Only the header is read before the data's size is checked against the file's.
  const InputFile file(path, "check the path (relative paths start at the working directory)");
  uint8_t prefix[12] = {};
  const size_t got = static_cast<size_t>(std::min<uint64_t>(file.size(), sizeof prefix));
  file.read_at(prefix, got, 0);
  const HeaderSpan span = header_span(prefix, got, file.size(), path);
  std::string header(span.length, '\0');
  file.read_at(header.data(), span.length, span.offset);
  NpyArray a = parse_header(header, path);
  const uint64_t data_at = span.offset + span.length;
  check_data_size(a, file.size() - data_at, path);
  a.data.resize(file.size() - data_at);
  file.read_at(a.data.data(), a.data.size(), data_at);
  return a;
}

std::vector<float> npy_to_floats(const NpyArray& a, const std::string& source) {
  INGOT_CHECK_AS((a.kind == 'f' && (a.itemsize == 4 || a.itemsize == 8)) || (a.kind == 'u' && a.itemsize == 1),
                 InputError, "{}: values of dtype {}: expected float32, float64 or uint8", source, a.dtype_name());
  const size_t n = static_cast<size_t>(a.numel());
  std::vector<float> out(n);
  if (a.kind == 'f' && a.itemsize == 4) {
    std::memcpy(out.data(), a.data.data(), n * 4);
  } else if (a.kind == 'f') {
    for (size_t i = 0; i < n; ++i) {
      double v = 0;
      std::memcpy(&v, a.data.data() + i * 8, 8);
      out[i] = static_cast<float>(v);
    }
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(a.data[i]) / 255.0f;
  }
  // Refused as the CSV reader refuses them: a NaN or an infinity trains (or predicts) nothing.
  const size_t per = a.shape.empty() || a.shape[0] == 0 ? n : n / static_cast<size_t>(a.shape[0]);
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(out[i]))
      fail(source, fmt::format("sample {} holds {} (its value {} of {}){}: every value must be a finite number; fix or "
                               "drop that sample",
                               i / per, out[i], i % per, per, a.itemsize == 8 ? " as float32" : ""));
  return out;
}

}  // namespace ingot::data
