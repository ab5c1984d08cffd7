// Philox4x32-10 counter-based random numbers and Ingot's exact mapping from raw bits to uniform,
// Bernoulli and normal values (docs/architecture.md: random numbers). Header-only SDK part: core, CPU plugins and
// the CUDA plugin (host and device code) share it, so draws are bit-identical everywhere.
//
// The stream of an op: value i (over the output's logical row-major index) is
//     philox4x32_10(counter = {lo32(c), hi32(c), 0, 0}, key = {lo32(seed), hi32(seed)})[i % 4]
// with c = offset + i / 4. An op drawing n values advances the offset by philox_advance(n) = ceil(n/4).
//
// Mapping of a 32-bit lane x:
//   uniform:   u = (x >> 8) * 2^-24, in [0, 1); value = a + (b - a) * u, computed in float for
//              f32/f16/bf16 (then rounded to the dtype) and in double for f64.
//   bernoulli: 1 if u < p else 0, compared in double (p = attr.a), written in the output dtype.
//   normal:    Box-Muller per counter: lanes (0,1) and (2,3) each make a pair (z0 for the even
//              lane, z1 for the odd one) with u1 = (x_even + 1) * 2^-32 (never 0) and
//              u2 = x_odd * 2^-32, z0 = sqrt(-2 ln u1) cos(2 pi u2), z1 = sqrt(-2 ln u1) sin(2 pi u2);
//              value = mean + std * z, all in float (double for f64); the float form converts the
//              lane to float before adding 1.
// Uniform and Bernoulli are bit-identical on host and device (device code uses round-to-nearest
// intrinsics so that nvcc cannot fuse a + (b - a) * u into an FMA); normal goes through
// logf / cosf / sinf, whose CUDA versions differ from glibc's by a few ulp (about 1e-6 relative).
#pragma once

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define INGOT_PHILOX_FN __host__ __device__ inline
#else
#define INGOT_PHILOX_FN inline
#endif

namespace ingot::sdk {

/// Four 32-bit lanes: a Philox counter or its output.
struct PhiloxBlock {
  uint32_t v[4];
};

INGOT_PHILOX_FN void philox_mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

/// One Philox4x32 round on the counter (c0, c1, c2, c3) with the round's key, in place. Code that
/// runs many counters side by side (SIMD lanes) calls it per lane.
INGOT_PHILOX_FN void philox_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t key0,
                                  uint32_t key1) {
  uint32_t hi0, lo0, hi1, lo1;
  philox_mulhilo(0xD2511F53u, c0, hi0, lo0);
  philox_mulhilo(0xCD9E8D57u, c2, hi1, lo1);
  c0 = hi1 ^ c1 ^ key0;
  c1 = lo1;
  c2 = hi0 ^ c3 ^ key1;
  c3 = lo0;
}

/// The key of the next round (Random123's Weyl constants).
INGOT_PHILOX_FN void philox_bump_key(uint32_t& key0, uint32_t& key1) {
  key0 += 0x9E3779B9u;
  key1 += 0xBB67AE85u;
}

/// Philox4x32 with 10 rounds and Random123's constants.
INGOT_PHILOX_FN PhiloxBlock philox4x32_10(PhiloxBlock ctr, uint32_t key0, uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) philox_bump_key(key0, key1);
    philox_round(ctr.v[0], ctr.v[1], ctr.v[2], ctr.v[3], key0, key1);
  }
  return ctr;
}

/// The four lanes for counter c = offset + i/4 of a stream keyed by `seed`.
INGOT_PHILOX_FN PhiloxBlock philox_block(uint64_t seed, uint64_t counter) {
  const PhiloxBlock ctr{{static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u}};
  return philox4x32_10(ctr, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

/// Raw 32 bits of value i of the stream (seed, offset).
INGOT_PHILOX_FN uint32_t philox_bits(uint64_t seed, uint64_t offset, uint64_t i) {
  return philox_block(seed, offset + i / 4).v[i % 4];
}

/// How far an op drawing n values advances the offset: ceil(n / 4).
INGOT_PHILOX_FN uint64_t philox_advance(uint64_t n) { return n / 4 + (n % 4 != 0 ? 1 : 0); }

/// u = (x >> 8) * 2^-24, exact in float and double, in [0, 1).
INGOT_PHILOX_FN float philox_unit_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
INGOT_PHILOX_FN double philox_unit_double(uint32_t x) { return static_cast<double>(x >> 8) * (1.0 / 16777216.0); }

/// Uniform value in [a, b) (float form: f32, f16, bf16 before rounding).
INGOT_PHILOX_FN float philox_uniform_float(uint32_t x, float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, __fmul_rn(b - a, philox_unit_float(x)));
#else
  return a + (b - a) * philox_unit_float(x);
#endif
}
INGOT_PHILOX_FN double philox_uniform_double(uint32_t x, double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, __dmul_rn(b - a, philox_unit_double(x)));
#else
  return a + (b - a) * philox_unit_double(x);
#endif
}

/// Bernoulli draw: true with probability p.
INGOT_PHILOX_FN bool philox_bernoulli(uint32_t x, double p) { return philox_unit_double(x) < p; }

/// Standard normal from lane `lane` (0..3) of a block, Box-Muller over lane pairs (0,1), (2,3).
INGOT_PHILOX_FN float philox_normal_float(const PhiloxBlock& block, unsigned lane) {
  const uint32_t x_even = block.v[lane & 2u];
  const uint32_t x_odd = block.v[(lane & 2u) + 1u];
  const float u1 = (static_cast<float>(x_even) + 1.0f) * 2.3283064365386963e-10f;  // 2^-32
  const float u2 = static_cast<float>(x_odd) * 2.3283064365386963e-10f;
  const float r = ::sqrtf(-2.0f * ::logf(u1));
  const float theta = 6.28318530717958647692f * u2;
  return (lane & 1u) == 0 ? r * ::cosf(theta) : r * ::sinf(theta);
}
INGOT_PHILOX_FN double philox_normal_double(const PhiloxBlock& block, unsigned lane) {
  const uint32_t x_even = block.v[lane & 2u];
  const uint32_t x_odd = block.v[(lane & 2u) + 1u];
  const double u1 = (static_cast<double>(x_even) + 1.0) * 2.3283064365386963e-10;
  const double u2 = static_cast<double>(x_odd) * 2.3283064365386963e-10;
  const double r = ::sqrt(-2.0 * ::log(u1));
  const double theta = 6.28318530717958647692 * u2;
  return (lane & 1u) == 0 ? r * ::cos(theta) : r * ::sin(theta);
}

}  // namespace ingot::sdk

#undef INGOT_PHILOX_FN
