// Safetensors reader: validates the whole header against the file before allocating any tensor,
// then reads each tensor's bytes straight into its storage.
#include "ingot/io/safetensors.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ingot/base/input_file.h"

namespace ingot::io {
namespace {

using nlohmann::json;

// One validated header entry.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin;
  uint64_t end;
};

// Every refusal: one line naming the file and the defect.
template <class... Args>
[[noreturn]] void refuse(const std::string& where, fmt::format_string<Args...> what, Args&&... args) {
  throw InputError(fmt::format("{}: {}", where, fmt::format(what, std::forward<Args>(args)...)));
}

// The header only ever nests three levels (object / entry / shape array) and its lists are short;
// anything else is refused while parsing, so a hostile header cannot build a huge tree.
json parse_header(const std::string& text, const std::string& where) {
  constexpr int kMaxItems = 64;  // above any real shape, so parse_entry can name the real limit
  int items = 0;
  const json::parser_callback_t limits = [&](int depth, json::parse_event_t event, json&) {
    if (depth > 3) refuse(where, "safetensors header nests deeper than the format allows: file is corrupt");
    if (depth == 2 && (event == json::parse_event_t::array_start || event == json::parse_event_t::object_start)) {
      items = 0;
    }
    if (depth == 3 && event == json::parse_event_t::value && ++items > kMaxItems) {
      refuse(where, "a list in the safetensors header has more than {} items: file is corrupt", kMaxItems);
    }
    return true;
  };
  try {
    return json::parse(text, limits);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond double
    std::string msg = e.what();
    const size_t cut = msg.find("] ");
    if (cut != std::string::npos) msg = msg.substr(cut + 2);
    refuse(where, "safetensors header is not valid JSON ({}): file is corrupt or not safetensors", msg);
  }
}

uint64_t unsigned_field(const json& v, const std::string& where, const std::string& what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    refuse(where, "{} must be a non-negative integer, got {}", what, v.dump());
  }
  return v.get<uint64_t>();
}

Entry parse_entry(const std::string& name, const json& v, const std::string& where) {
  const std::string tag = fmt::format("tensor '{}'", printable(name));
  if (!v.is_object()) refuse(where, "{}: header entry is a JSON {}, expected an object", tag, v.type_name());
  for (const auto& [key, _] : v.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      refuse(where, "{}: unknown field '{}'", tag, printable(key));
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!v.contains(key)) refuse(where, "{}: header entry has no '{}'", tag, key);
  }
  Entry e{name, DType::F32, Shape{}, 0, 0};
  const json& dtype = v["dtype"];
  const auto known = dtype.is_string() ? safetensors_dtype_from_name(dtype.get<std::string>()) : std::nullopt;
  if (!known) {
    refuse(where, "{} has dtype {}, which Ingot cannot read (known: F32 F64 F16 BF16 I64 I32 I8 U8 BOOL)", tag,
           dtype.dump());
  }
  e.dtype = *known;
  const json& shape = v["shape"];
  if (!shape.is_array()) refuse(where, "{}: shape must be a list of integers, got {}", tag, shape.dump());
  if (shape.size() > static_cast<size_t>(Shape::kMaxDims)) {
    refuse(where, "{} has {} dims; Ingot supports at most {}", tag, shape.size(), Shape::kMaxDims);
  }
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX);
  for (const json& d : shape) {
    const uint64_t n = unsigned_field(d, where, fmt::format("{}: shape dimension", tag));
    if (n > limit) refuse(where, "{}: shape dimension {} is too large", tag, n);
    e.shape.push_back(static_cast<int64_t>(n));
  }
  // numel * element size must fit int64 (Ingot's sizes): checked per step, before a product can
  // wrap; an empty tensor holds no bytes whatever its other dims say, but their product must
  // still fit int64 (numel and the strides multiply them).
  uint64_t bytes = 0;
  if (std::find(e.shape.begin(), e.shape.end(), 0) == e.shape.end()) {
    bytes = static_cast<uint64_t>(dtype_size(e.dtype));
    for (const int64_t d : e.shape) {
      const uint64_t n = static_cast<uint64_t>(d);
      if (bytes > limit / n) {
        refuse(where, "{} has shape {} whose byte size overflows 64 bits: file is corrupt", tag, shape.dump());
      }
      bytes *= n;
    }
  } else {
    uint64_t elements = 1;
    for (const int64_t d : e.shape) {
      const uint64_t n = static_cast<uint64_t>(std::max<int64_t>(d, 1));
      if (elements > limit / n) {
        refuse(where, "{} has shape {} whose element count overflows 64 bits: file is corrupt", tag, shape.dump());
      }
      elements *= n;
    }
  }
  const json& offsets = v["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    refuse(where, "{}: data_offsets must be [begin, end], got {}", tag, offsets.dump());
  }
  e.begin = unsigned_field(offsets[0], where, fmt::format("{}: data_offsets begin", tag));
  e.end = unsigned_field(offsets[1], where, fmt::format("{}: data_offsets end", tag));
  if (e.end < e.begin) refuse(where, "{}: data_offsets {} end before they begin", tag, offsets.dump());
  if (e.end - e.begin != bytes) {
    refuse(where, "{} ({} {}) needs {} bytes but data_offsets {} hold {}: file is corrupt", tag,
           safetensors_dtype_name(e.dtype), e.shape.str(), bytes, offsets.dump(), e.end - e.begin);
  }
  return e;
}

Metadata parse_metadata(const json& v, const std::string& where) {
  if (!v.is_object()) refuse(where, "__metadata__ is a JSON {}, expected an object", v.type_name());
  Metadata out;
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string())
      refuse(where, "__metadata__ '{}' is {}, expected a string", printable(key), printable(value.dump()));
    out[key] = value.get<std::string>();
  }
  return out;
}

// The format requires the tensors to tile the data section: in order, no gap, no overlap, to the end.
void check_layout(std::vector<Entry>& entries, uint64_t data_size, const std::string& where) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t pos = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    const std::string range = fmt::format("[{}, {})", e.begin, e.end);
    if (e.end > data_size) {
      refuse(where,
             "tensor '{}' occupies bytes {} of the data section, which holds only {}: file is truncated or corrupt",
             printable(e.name), range, data_size);
    }
    if (e.begin > pos) {
      const std::string after = prev ? fmt::format("after tensor '{}' (ending at {})", printable(prev->name), pos)
                                     : std::string("at the start of the data section");
      refuse(where, "gap of {} bytes {} before tensor '{}' {}: file is corrupt", e.begin - pos, after,
             printable(e.name), range);
    }
    if (e.begin < pos) {
      refuse(where, "tensor '{}' {} overlaps tensor '{}', which ends at {}: file is corrupt", printable(e.name), range,
             printable(prev->name), pos);
    }
    pos = e.end;
    prev = &e;
  }
  if (pos != data_size) {
    refuse(where, "{} bytes after the last tensor are not described by the header: file is corrupt", data_size - pos);
  }
}

// A bool byte other than 0 or 1 would be undefined behaviour once read as C++ bool.
void check_bools(const Tensor& t, const std::string& name, const std::string& where) {
  const auto* p = static_cast<const uint8_t*>(t.storage()->data());
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (p[i] > 1)
      refuse(where, "tensor '{}' (BOOL) holds byte {} at element {}: file is corrupt", printable(name), p[i], i);
  }
}

}  // namespace

SafetensorsFile load_safetensors(const std::filesystem::path& path) {
  const InputFile file(path);
  const std::string& where = file.where();
  if (file.size() < 8) {
    refuse(where,
           "file has {} bytes, fewer than the 8 of a safetensors header length: file is truncated or not "
           "safetensors",
           file.size());
  }
  uint64_t header_len = 0;
  file.read_at(&header_len, 8, 0);
  if (header_len > kSafetensorsMaxHeader) {
    refuse(where, "safetensors header claims {} bytes (limit 100 MB): file is corrupt or not safetensors", header_len);
  }
  if (header_len > file.size() - 8) {
    refuse(where,
           "safetensors header claims {} bytes but only {} follow the length field: file is truncated or not "
           "safetensors",
           header_len, file.size() - 8);
  }
  std::string text(header_len, '\0');
  file.read_at(text.data(), header_len, 8);
  if (text.empty() || text[0] != '{') {
    refuse(where, "safetensors header does not start with '{{': file is corrupt or not safetensors");
  }
  const json header = parse_header(text, where);
  if (!header.is_object()) refuse(where, "safetensors header is not a JSON object: file is corrupt");

  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      out.metadata = parse_metadata(value, where);
    } else {
      entries.push_back(parse_entry(name, value, where));
    }
  }
  const uint64_t data_start = 8 + header_len;
  check_layout(entries, file.size() - data_start, where);

  // Only now, with every size proven to fit inside the file, is tensor memory allocated.
  for (const Entry& e : entries) {
    Tensor t = Tensor::empty(e.shape, e.dtype);
    if (e.end > e.begin) file.read_at(t.storage()->data(), e.end - e.begin, data_start + e.begin);
    if (e.dtype == DType::Bool) check_bools(t, e.name, where);
    out.order.push_back(e.name);
    out.tensors.emplace(e.name, std::move(t));
  }
  if (const auto recorded = out.metadata.find(kChecksumKey); recorded != out.metadata.end()) {
    const std::string actual = content_checksum(NamedTensors(out.tensors.begin(), out.tensors.end()), out.metadata);
    if (actual != recorded->second)
      refuse(
          where,
          "the file is damaged: its content has CRC-32 {} where '{}' was recorded (__metadata__ '{}'): use an intact "
          "copy (a weights file changed on purpose must drop that entry)",
          actual, printable(recorded->second), kChecksumKey);
    out.checksummed = true;
  }
  return out;
}

}  // namespace ingot::io
