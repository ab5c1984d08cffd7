// Fuzz target: bytes -> a file -> read_idx (gzip or plain through zlib: magic, dtype, dims, the
// 2^31-element limit, truncation, trailing bytes, corrupt gzip). Every refusal must be an
// InputError; an accepted array must hold product(dims) bytes and survive write_idx + read_idx.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "ingot/base/error.h"
#include "ingot/data/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ingot::fuzz::ScratchFile input("idx");
  static const ingot::fuzz::ScratchFile copy("idx-copy");
  input.write(data, size);
  try {
    const ingot::data::IdxArray a = ingot::data::read_idx(input.path());
    ingot::fuzz::require(!a.dims.empty() && a.dims.size() <= 8, "read_idx: 1 to 8 dims");
    int64_t elements = 1;
    for (const int64_t d : a.dims) {
      ingot::fuzz::require(d >= 0 && d <= int64_t{0xffffffff}, "read_idx: dims are 32-bit unsigned");
      elements *= d;
    }
    ingot::fuzz::require(elements == static_cast<int64_t>(a.data.size()), "read_idx: product(dims) bytes");
    ingot::data::write_idx(copy.path(), a, /*gzip=*/false);
    const ingot::data::IdxArray b = ingot::data::read_idx(copy.path());
    ingot::fuzz::require(b.dims == a.dims && b.data == a.data, "write_idx + read_idx round trip");
  } catch (const ingot::InputError&) {
    // The documented refusal of a bad IDX file.
  }
  return 0;
}
