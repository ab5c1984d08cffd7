// Exact int8 products on every CPU: the source split into pieces of a few bits, each multiplied by
// oneDNN without zero points, the partial s32 results summed back in wrapping s32 arithmetic.
// Why: without VNNI (AVX2, AVX-512 core) oneDNN sums u8 x s8 pairs in saturating s16
// (vpmaddubsw) and halves the weights of s8 sources; and an int8 convolution's s32 destination
// passes through f32, which rounds accumulators above 2^24. Pieces of b bits are below both
// limits, so every partial, and their sum, is the accumulator the op table defines.
#pragma once

#include <cstdint>
#include <optional>

namespace ingot::onednn::quant {

/// Whether oneDNN's u8 x s8 products accumulate exactly in s32 on this CPU (VNNI or AMX).
bool int8_products_exact();

/// How a source is cut: u = x as u8 (an s8 x shifted by +128), piece i = (u >> (bits * i)) & mask,
/// so that u = sum_i 2^(bits * i) * piece_i.
struct PieceSplit {
  int bits = 8;
  int pieces = 1;
};

/// The widest pieces that keep every partial exact for a reduction of length `k`: below 128 per
/// piece where oneDNN's products saturate, and with k * max_piece * 128 <= 2^24 where the
/// primitive's s32 result passes through f32 (`through_f32`, convolutions). nullopt: no split is
/// exact (k beyond 2^17 with an f32 round trip).
std::optional<PieceSplit> piece_split(int64_t k, bool through_f32);

/// Writes the `split.pieces` planes of `n` dense elements of x (u8 or i8, `x_signed`) to
/// out[i * n ...]: piece i of u as above.
void make_pieces(const void* x, bool x_signed, int64_t n, const PieceSplit& split, uint8_t* out);

/// acc += partial << shift, elementwise over n values, in wrapping s32 arithmetic.
void add_shifted(int32_t* acc, const int32_t* partial, int64_t n, int shift);

/// The zero point of u for a source zero point: x_zp, or x_zp + 128 for an s8 source
/// (sum (x - x_zp) w = sum (u - that) w).
inline int32_t shifted_zero_point(int32_t x_zp, bool x_signed) { return x_signed ? x_zp + 128 : x_zp; }

}  // namespace ingot::onednn::quant
