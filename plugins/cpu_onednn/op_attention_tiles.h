// Flash-attention-2 forward and backward over heads of [B, H, T, D], in tiles of kTileQ queries
// by kTileK keys, written once over a vector type V and its gemm (op_attention_gemm.h); included
// only by the per-ISA translation units, inside their anonymous namespace (see that header).
//
// Scores are computed transposed, S^T = K Q^T: keys are rows, queries are vector lanes, so the
// online softmax keeps each query's running max and sum in a lane and runs down the rows; K is
// the scalar operand, read in place in any layout, and only Q^T is packed.
#pragma once

constexpr int64_t kTileQ = 64;  // queries per tile: the lanes of S^T
constexpr int64_t kTileK = 64;  // keys per tile: the rows of S^T
constexpr float kNegInf = -__builtin_inff();
constexpr float kPosInf = __builtin_inff();

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

// bf16.h's conversions, repeated here so that this unit's ISA never leaks into a shared inline copy.
inline float bf16_bits_to_float(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// Hands out 64-byte aligned float arrays from one block; with a null block it only counts.
class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  float* floats(int64_t n) {
    float* at = base_ == nullptr ? nullptr : reinterpret_cast<float*>(base_ + used_);
    used_ += static_cast<size_t>(round_up(n * 4, 64));
    return at;
  }
  size_t used() const { return used_; }

 private:
  char* base_;
  size_t used_ = 0;
};

inline int64_t offset_of(const AttnOperand& t, int64_t b, int64_t h, int64_t i, int64_t c) {
  return b * t.stride[0] + h * t.stride[1] + i * t.stride[2] + c * t.stride[3];
}

inline float element(const AttnOperand& t, bool bf16, int64_t off) {
  return bf16 ? bf16_bits_to_float(static_cast<const uint16_t*>(t.data)[off]) : static_cast<const float*>(t.data)[off];
}

/// dst[r * ld + c] = t[b, h, r0 + r, c] for c < width, 0 up to `pad`.
template <class V>
void pack_rows(const AttnOperand& t, bool bf16, int64_t b, int64_t h, int64_t r0, int64_t rows, int64_t width,
               float* dst, int64_t ld, int64_t pad) {
  for (int64_t r = 0; r < rows; ++r) {
    float* d = dst + r * ld;
    const int64_t off = offset_of(t, b, h, r0 + r, 0);
    int64_t c = 0;
    if (t.stride[3] == 1 && !bf16) {
      std::memcpy(d, static_cast<const float*>(t.data) + off, static_cast<size_t>(width) * 4);
      c = width;
    } else if (t.stride[3] == 1) {
      const uint16_t* s = static_cast<const uint16_t*>(t.data) + off;
      for (; c + V::W <= width; c += V::W) V::store(d + c, V::load_bf16(s + c));
    }
    for (; c < width; ++c) d[c] = element(t, bf16, off + c * t.stride[3]);
    for (; c < pad; ++c) d[c] = 0.f;
  }
}

/// dst[c * ld + r] = t[b, h, r0 + r, c] (transposed) for r < rows, 0 up to `pad` rows.
inline void pack_cols(const AttnOperand& t, bool bf16, int64_t b, int64_t h, int64_t r0, int64_t rows, int64_t width,
                      float* dst, int64_t ld, int64_t pad) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t off = offset_of(t, b, h, r0 + r, 0);
    for (int64_t c = 0; c < width; ++c) dst[c * ld + r] = element(t, bf16, off + c * t.stride[3]);
  }
  for (int64_t c = 0; c < width; ++c)
    for (int64_t r = rows; r < pad; ++r) dst[c * ld + r] = 0.f;
}

/// Writes src[0, width) * mul as row `row` (width elements) of a contiguous f32 / bf16 output.
inline void store_row(void* out, bool bf16, int64_t row, int64_t width, const float* src, float mul) {
  if (bf16) {
    uint16_t* d = static_cast<uint16_t*>(out) + row * width;
    for (int64_t e = 0; e < width; ++e) d[e] = float_to_bf16_bits(src[e] * mul);
  } else {
    float* d = static_cast<float*>(out) + row * width;
    for (int64_t e = 0; e < width; ++e) d[e] = src[e] * mul;
  }
}

/// The mask's term for query i, key j: its additive value, or 0 / -inf for a bool mask.
inline float mask_term(const AttnProblem& p, int64_t b, int64_t h, int64_t i, int64_t j) {
  const int64_t off = offset_of(p.m, b, h, i, j);
  if (p.mask == 1) return static_cast<const uint8_t*>(p.m.data)[off] != 0 ? 0.f : kNegInf;
  return element(p.m, p.bf16, off);
}

/// Turns a tile of raw dot products S^T (nk keys from j0 by lanes of queries from i0) into
/// scores: scale, the mask's term, and -inf where the causal rule hides the key.
template <class V>
void masked_scores(const AttnProblem& p, float* st, int64_t nk, int64_t lanes, int64_t b, int64_t h, int64_t i0,
                   int64_t mq, int64_t j0) {
  const typename V::R scale = V::set1(p.scale);
  const bool row_mask = p.mask != 0 && p.m.stride[2] == 0;  // the same for every query: one term per key
  for (int64_t c = 0; c < nk; ++c) {
    float* row = st + c * kTileQ;
    if (row_mask) {
      const typename V::R term = V::set1(mask_term(p, b, h, 0, j0 + c));
      for (int64_t n = 0; n < lanes; n += V::W) V::store(row + n, V::fmadd(V::load(row + n), scale, term));
    } else {
      for (int64_t n = 0; n < lanes; n += V::W) V::store(row + n, V::mul(V::load(row + n), scale));
      if (p.mask != 0)
        for (int64_t q = 0; q < mq; ++q) row[q] += mask_term(p, b, h, i0 + q, j0 + c);
    }
    if (p.causal) {  // key j0 + c is hidden from the queries before it (shifted for lower-right)
      const int64_t hidden = min64(j0 + c - p.causal_shift - i0, lanes);
      for (int64_t q = 0; q < hidden; ++q) row[q] = kNegInf;
    }
  }
}

// ---- forward --------------------------------------------------------------------------------

struct FwdScratch {
  float *qt, *kp, *vp, *st, *keep, *o, *m, *l, *alpha;
};

template <class V>
FwdScratch fwd_scratch(const AttnProblem& p, Carver& c) {
  const int64_t dvp = round_up(p.dv, V::W);
  return {c.floats(p.d * kTileQ),    c.floats(kTileK * p.d),    c.floats(kTileK * dvp),
          c.floats(kTileK * kTileQ), c.floats(kTileK * kTileQ), c.floats(kTileQ * dvp),
          c.floats(kTileQ),          c.floats(kTileQ),          c.floats(kTileQ)};
}

template <class V>
size_t fwd_scratch_bytes(const AttnProblem& p) {
  Carver c(nullptr);
  fwd_scratch<V>(p, c);
  return c.used();
}

/// One step of the online softmax over a tile of scores: the new running max per query lane,
/// the old sum rescaled by alpha = e^(m_old - m_new) plus the tile's, and e^(s - m_new) in place.
/// A lane whose keys are all hidden so far keeps max -inf and sum 0 (its exps use 0 instead).
template <class V>
void online_softmax(const FwdScratch& s, int64_t nk, int64_t lanes) {
  using R = typename V::R;
  for (int64_t n = 0; n < lanes; n += V::W) {
    R tile_max = V::set1(kNegInf);
    for (int64_t c = 0; c < nk; ++c) tile_max = V::max(tile_max, V::load(s.st + c * kTileQ + n));
    const R m_old = V::load(s.m + n);
    const R m_new = V::max(m_old, tile_max);
    const R m_use = V::neginf_to_zero(m_new);
    const R alpha = vexp<V>(V::sub(m_old, m_use));
    R sum = V::zero();
    for (int64_t c = 0; c < nk; ++c) {
      float* x = s.st + c * kTileQ + n;
      const R e = vexp<V>(V::sub(V::load(x), m_use));
      V::store(x, e);
      sum = V::add(sum, e);
    }
    V::store(s.l + n, V::fmadd(V::load(s.l + n), alpha, sum));
    V::store(s.m + n, m_new);
    V::store(s.alpha + n, alpha);
  }
}

/// Output rows and lse of queries [i0, i0 + kTileQ) of head bh, one key tile at a time.
template <class V>
void forward_tile(const AttnProblem& p, const FwdScratch& s, int64_t bh, int64_t i0) {
  const int64_t b = bh / p.h, h = bh % p.h;
  const int64_t mq = min64(kTileQ, p.tq - i0), lanes = round_up(mq, V::W), dvp = round_up(p.dv, V::W);
  pack_cols(p.q, p.bf16, b, h, i0, mq, p.d, s.qt, kTileQ, lanes);
  for (int64_t q = 0; q < kTileQ; ++q) {
    s.m[q] = kNegInf;
    s.l[q] = 0.f;
  }
  std::memset(s.o, 0, static_cast<size_t>(mq * dvp) * 4);
  const int64_t j_end = p.causal ? clamp64(i0 + mq + p.causal_shift, 0, p.tk) : p.tk;
  const bool k_in_place = !p.bf16;
  const bool v_in_place = !p.bf16 && p.v.stride[3] == 1 && p.dv % V::W == 0;
  for (int64_t j0 = 0; j0 < j_end; j0 += kTileK) {
    const int64_t nk = min64(kTileK, j_end - j0);
    const float* ka = s.kp;
    int64_t k_row = p.d, k_col = 1;
    if (k_in_place) {
      ka = static_cast<const float*>(p.k.data) + offset_of(p.k, b, h, j0, 0);
      k_row = p.k.stride[2];
      k_col = p.k.stride[3];
    } else {
      pack_rows<V>(p.k, p.bf16, b, h, j0, nk, p.d, s.kp, p.d, p.d);
    }
    gemm<V>(nk, lanes, p.d, ka, k_row, k_col, s.qt, kTileQ, s.st, kTileQ, false);
    masked_scores<V>(p, s.st, nk, lanes, b, h, i0, mq, j0);
    online_softmax<V>(s, nk, lanes);
    if (p.dropout_p > 0.0) {
      attention_keep_tile(p, bh, i0, mq, j0, nk, s.keep, kTileQ);
      for (int64_t c = 0; c < nk; ++c)
        for (int64_t q = 0; q < mq; ++q) s.st[c * kTileQ + q] *= s.keep[c * kTileQ + q];
    }
    for (int64_t q = 0; q < mq; ++q) {
      const typename V::R a = V::set1(s.alpha[q]);
      float* row = s.o + q * dvp;
      for (int64_t e = 0; e < dvp; e += V::W) V::store(row + e, V::mul(V::load(row + e), a));
    }
    const float* vb = s.vp;
    int64_t v_row = dvp;
    if (v_in_place) {
      vb = static_cast<const float*>(p.v.data) + offset_of(p.v, b, h, j0, 0);
      v_row = p.v.stride[2];
    } else {
      pack_rows<V>(p.v, p.bf16, b, h, j0, nk, p.dv, s.vp, dvp, dvp);
    }
    gemm<V>(mq, dvp, nk, s.st, 1, kTileQ, vb, v_row, s.o, dvp, true);  // O += P V, P read through S^T
  }
  for (int64_t q = 0; q < mq; ++q) {
    const float l = s.l[q];
    const int64_t row = bh * p.tq + i0 + q;
    store_row(p.o_out, p.bf16, row, p.dv, s.o + q * dvp, l > 0.f ? 1.f / l : 0.f);
    p.lse_out[row] = l > 0.f ? s.m[q] + std::log(l) : kNegInf;
  }
}

template <class V>
size_t forward_workspace(const AttnProblem& p) {
  return fwd_scratch_bytes<V>(p) * static_cast<size_t>(p.threads);
}

template <class V>
void forward(const AttnProblem& p, void* workspace) {
  const int64_t tiles = (p.tq + kTileQ - 1) / kTileQ, tasks = p.b * p.h * tiles;
  const size_t per_thread = fwd_scratch_bytes<V>(p);
#pragma omp parallel for schedule(dynamic) num_threads(p.threads)
  for (int64_t t = 0; t < tasks; ++t) {
    Carver c(static_cast<char*>(workspace) + per_thread * static_cast<size_t>(omp_get_thread_num()));
    forward_tile<V>(p, fwd_scratch<V>(p, c), t / tiles, t % tiles * kTileQ);
  }
}

// ---- backward -------------------------------------------------------------------------------

/// One head's operands packed once: Q and dO as rows (B operands) and transposed (lanes), K
/// padded to whole vectors, V, lse (+inf for rows that saw no key, so that their P is 0),
/// D = rowsum(dO * O), and the dQ accumulator.
struct BwdHead {
  float *qr, *qt, *gor, *got, *lse, *delta, *kr, *vr, *dq;
};

struct BwdScratch {
  float *st, *dpt, *keep, *pd, *dk, *dv;
};

template <class V>
BwdHead bwd_head(const AttnProblem& p, Carver& c) {
  const int64_t dp = round_up(p.d, V::W), dvp = round_up(p.dv, V::W), tqp = round_up(p.tq, V::W);
  return {c.floats(p.tq * dp), c.floats(p.d * tqp), c.floats(p.tq * dvp),  c.floats(p.dv * tqp), c.floats(tqp),
          c.floats(tqp),       c.floats(p.tk * dp), c.floats(p.tk * p.dv), c.floats(p.tq * dp)};
}

template <class V>
BwdScratch bwd_scratch(const AttnProblem& p, Carver& c) {
  const int64_t dp = round_up(p.d, V::W), dvp = round_up(p.dv, V::W);
  return {c.floats(kTileK * kTileQ), c.floats(kTileK * kTileQ), c.floats(kTileK * kTileQ),
          c.floats(kTileK * kTileQ), c.floats(kTileK * dp),     c.floats(kTileK * dvp)};
}

template <class V>
void pack_head(const AttnProblem& p, const BwdHead& s, int64_t bh) {
  const int64_t b = bh / p.h, h = bh % p.h;
  const int64_t dp = round_up(p.d, V::W), dvp = round_up(p.dv, V::W), tqp = round_up(p.tq, V::W);
  pack_rows<V>(p.q, p.bf16, b, h, 0, p.tq, p.d, s.qr, dp, dp);
  pack_cols(p.q, p.bf16, b, h, 0, p.tq, p.d, s.qt, tqp, tqp);
  pack_rows<V>(p.go, p.bf16, b, h, 0, p.tq, p.dv, s.gor, dvp, dvp);
  pack_cols(p.go, p.bf16, b, h, 0, p.tq, p.dv, s.got, tqp, tqp);
  pack_rows<V>(p.k, p.bf16, b, h, 0, p.tk, p.d, s.kr, dp, dp);
  pack_rows<V>(p.v, p.bf16, b, h, 0, p.tk, p.dv, s.vr, p.dv, p.dv);
  for (int64_t q = 0; q < tqp; ++q) {
    if (q >= p.tq) {
      s.lse[q] = kPosInf;
      s.delta[q] = 0.f;
      continue;
    }
    const float l = p.lse_in[bh * p.tq + q];
    s.lse[q] = l == kNegInf ? kPosInf : l;
    const int64_t off = offset_of(p.o, b, h, q, 0);
    float delta = 0.f;
    for (int64_t e = 0; e < p.dv; ++e) delta += s.gor[q * dvp + e] * element(p.o, p.bf16, off + e * p.o.stride[3]);
    s.delta[q] = delta;
  }
  std::memset(s.dq, 0, static_cast<size_t>(p.tq * dp) * 4);
}

/// Recomputes the tile's probabilities P^T = e^(S^T - lse) and turns them into dS^T = P^T (dP^T
/// keep - D) scale in sc.dpt, with dP^T = V dO^T; returns P^T keep (what dV needs).
template <class V>
const float* tile_ds(const AttnProblem& p, const BwdHead& s, const BwdScratch& sc, int64_t bh, int64_t i0, int64_t mq,
                     int64_t j0, int64_t nk) {
  using R = typename V::R;
  const int64_t b = bh / p.h, h = bh % p.h;
  const int64_t dp = round_up(p.d, V::W), tqp = round_up(p.tq, V::W), lanes = round_up(mq, V::W);
  gemm<V>(nk, lanes, p.d, s.kr + j0 * dp, dp, 1, s.qt + i0, tqp, sc.st, kTileQ, false);
  masked_scores<V>(p, sc.st, nk, lanes, b, h, i0, mq, j0);
  for (int64_t c = 0; c < nk; ++c)
    for (int64_t n = 0; n < lanes; n += V::W) {
      float* x = sc.st + c * kTileQ + n;
      V::store(x, vexp<V>(V::sub(V::load(x), V::load(s.lse + i0 + n))));
    }
  gemm<V>(nk, lanes, p.dv, s.vr + j0 * p.dv, p.dv, 1, s.got + i0, tqp, sc.dpt, kTileQ, false);
  const float* pd = sc.st;
  if (p.dropout_p > 0.0) {
    attention_keep_tile(p, bh, i0, mq, j0, nk, sc.keep, kTileQ);
    for (int64_t c = 0; c < nk; ++c)
      for (int64_t q = 0; q < mq; ++q) {
        const int64_t at = c * kTileQ + q;
        sc.pd[at] = sc.st[at] * sc.keep[at];
        sc.dpt[at] *= sc.keep[at];
      }
    pd = sc.pd;
  }
  const R scale = V::set1(p.scale);
  for (int64_t c = 0; c < nk; ++c)
    for (int64_t n = 0; n < lanes; n += V::W) {
      float* dpt = sc.dpt + c * kTileQ + n;
      const R ds = V::mul(V::load(sc.st + c * kTileQ + n), V::sub(V::load(dpt), V::load(s.delta + i0 + n)));
      V::store(dpt, V::mul(ds, scale));
    }
  return pd;
}

/// dK and dV of keys [j0, j0 + kTileK) of head bh over every query that sees them; with
/// `with_dq` also their share of dQ, added into the head's accumulator.
template <class V>
void kv_tile(const AttnProblem& p, const BwdHead& s, const BwdScratch& sc, int64_t bh, int64_t j0, bool with_dq) {
  const int64_t dp = round_up(p.d, V::W), dvp = round_up(p.dv, V::W);
  const int64_t nk = min64(kTileK, p.tk - j0);
  std::memset(sc.dk, 0, static_cast<size_t>(nk * dp) * 4);
  std::memset(sc.dv, 0, static_cast<size_t>(nk * dvp) * 4);
  const int64_t i_first = p.causal ? clamp64(j0 - p.causal_shift, 0, p.tq) : 0;
  for (int64_t i0 = i_first / kTileQ * kTileQ; i0 < p.tq; i0 += kTileQ) {
    const int64_t mq = min64(kTileQ, p.tq - i0);
    const float* pd = tile_ds<V>(p, s, sc, bh, i0, mq, j0, nk);
    gemm<V>(nk, dvp, mq, pd, kTileQ, 1, s.gor + i0 * dvp, dvp, sc.dv, dvp, true);                       // dV += P^T dO
    gemm<V>(nk, dp, mq, sc.dpt, kTileQ, 1, s.qr + i0 * dp, dp, sc.dk, dp, true);                        // dK += dS^T Q
    if (with_dq) gemm<V>(mq, dp, nk, sc.dpt, 1, kTileQ, s.kr + j0 * dp, dp, s.dq + i0 * dp, dp, true);  // dQ += dS K
  }
  for (int64_t c = 0; c < nk; ++c) {
    store_row(p.gk, p.bf16, bh * p.tk + j0 + c, p.d, sc.dk + c * dp, 1.f);
    store_row(p.gv, p.bf16, bh * p.tk + j0 + c, p.dv, sc.dv + c * dvp, 1.f);
  }
}

/// dQ of queries [i0, i0 + kTileQ) of head bh over every key they see.
template <class V>
void q_tile(const AttnProblem& p, const BwdHead& s, const BwdScratch& sc, int64_t bh, int64_t i0) {
  const int64_t dp = round_up(p.d, V::W);
  const int64_t mq = min64(kTileQ, p.tq - i0);
  const int64_t j_end = p.causal ? clamp64(i0 + mq + p.causal_shift, 0, p.tk) : p.tk;
  for (int64_t j0 = 0; j0 < j_end; j0 += kTileK) {
    const int64_t nk = min64(kTileK, j_end - j0);
    tile_ds<V>(p, s, sc, bh, i0, mq, j0, nk);
    gemm<V>(mq, dp, nk, sc.dpt, 1, kTileQ, s.kr + j0 * dp, dp, s.dq + i0 * dp, dp, true);
  }
}

inline void store_dq(const AttnProblem& p, const float* dq, int64_t dp, int64_t bh, int64_t i0, int64_t rows) {
  for (int64_t q = 0; q < rows; ++q) store_row(p.gq, p.bf16, bh * p.tq + i0 + q, p.d, dq + (i0 + q) * dp, 1.f);
}

/// With at least one head per thread, each thread takes whole heads (dQ, dK, dV from one pass);
/// with fewer, the heads are packed first and dK / dV (per key tile) and dQ (per query tile)
/// are separate passes that recompute P. Either way every gradient element is summed by one
/// thread in a fixed order: the results do not depend on scheduling.
inline bool per_head(const AttnProblem& p) { return p.b * p.h >= p.threads; }

template <class V>
size_t backward_workspace(const AttnProblem& p) {
  Carver c(nullptr);
  const int64_t heads = per_head(p) ? p.threads : p.b * p.h;
  for (int64_t i = 0; i < heads; ++i) bwd_head<V>(p, c);
  for (int i = 0; i < p.threads; ++i) bwd_scratch<V>(p, c);
  return c.used();
}

template <class V>
void backward(const AttnProblem& p, void* workspace) {
  const int64_t bh_count = p.b * p.h;
  const int64_t dp = round_up(p.d, V::W);
  Carver sizes(nullptr);
  bwd_head<V>(p, sizes);
  const size_t head_bytes = sizes.used();
  const int64_t heads = per_head(p) ? p.threads : bh_count;
  char* scratch_base = static_cast<char*>(workspace) + head_bytes * static_cast<size_t>(heads);
  Carver scratch_sizes(nullptr);
  bwd_scratch<V>(p, scratch_sizes);
  const size_t scratch_bytes = scratch_sizes.used();
  const auto head_at = [&](int64_t i) {
    Carver c(static_cast<char*>(workspace) + head_bytes * static_cast<size_t>(i));
    return bwd_head<V>(p, c);
  };
  const auto scratch_of_thread = [&]() {
    Carver c(scratch_base + scratch_bytes * static_cast<size_t>(omp_get_thread_num()));
    return bwd_scratch<V>(p, c);
  };
  const int64_t k_tiles = (p.tk + kTileK - 1) / kTileK, q_tiles = (p.tq + kTileQ - 1) / kTileQ;
  if (per_head(p)) {
#pragma omp parallel for schedule(dynamic) num_threads(p.threads)
    for (int64_t bh = 0; bh < bh_count; ++bh) {
      const BwdHead s = head_at(omp_get_thread_num());
      const BwdScratch sc = scratch_of_thread();
      pack_head<V>(p, s, bh);
      for (int64_t jt = 0; jt < k_tiles; ++jt) kv_tile<V>(p, s, sc, bh, jt * kTileK, true);
      store_dq(p, s.dq, dp, bh, 0, p.tq);
    }
    return;
  }
#pragma omp parallel num_threads(p.threads)
  {
#pragma omp for schedule(dynamic)
    for (int64_t bh = 0; bh < bh_count; ++bh) pack_head<V>(p, head_at(bh), bh);
    const BwdScratch sc = scratch_of_thread();
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < bh_count * k_tiles; ++t)
      kv_tile<V>(p, head_at(t / k_tiles), sc, t / k_tiles, t % k_tiles * kTileK, false);
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < bh_count * q_tiles; ++t) {
      const int64_t bh = t / q_tiles, i0 = t % q_tiles * kTileQ;
      const BwdHead s = head_at(bh);
      q_tile<V>(p, s, sc, bh, i0);
      store_dq(p, s.dq, dp, bh, i0, min64(kTileQ, p.tq - i0));
    }
  }
}
