// Exact int8 products through pieces of the source (see int8_pieces.h).
#include "int8_pieces.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace ingot::onednn::quant {

bool int8_products_exact() {
  static const bool exact = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx2_vnni:
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
        return true;
      default:
        return false;
    }
  }();
  return exact;
}

std::optional<PieceSplit> piece_split(int64_t k, bool through_f32) {
  constexpr int64_t kF32Exact = int64_t{1} << 24, kMaxWeight = 128;
  for (int bits = int8_products_exact() ? 8 : 7; bits >= 1; --bits) {
    const int64_t max_piece = (int64_t{1} << bits) - 1;
    if (through_f32 && k * max_piece * kMaxWeight > kF32Exact) continue;
    return PieceSplit{bits, (8 + bits - 1) / bits};
  }
  return std::nullopt;
}

void make_pieces(const void* x, bool x_signed, int64_t n, const PieceSplit& split, uint8_t* out) {
  const auto* u = static_cast<const uint8_t*>(x);
  const auto flip = static_cast<uint8_t>(x_signed ? 0x80 : 0);  // two's complement + 128 as u8
  const auto mask = static_cast<uint8_t>((1u << split.bits) - 1);
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<uint8_t>(u[i] ^ flip);
    for (int p = 0; p < split.pieces; ++p) out[p * n + i] = static_cast<uint8_t>((v >> (split.bits * p)) & mask);
  }
}

void add_shifted(int32_t* acc, const int32_t* partial, int64_t n, int shift) {
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i)
    acc[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) + (static_cast<uint32_t>(partial[i]) << shift));
}

}  // namespace ingot::onednn::quant
