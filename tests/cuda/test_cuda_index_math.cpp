// The cuda plugin's index math on the CPU (index_math.h is shared by host and kernels): FastDivmod
// against / and %, dim coalescing, the 32-bit bound, and Indexer offsets before and after flatten().
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "index_math.h"

namespace ingot::cuda {
namespace {

constexpr uint32_t kMax = 0x7fffffffu;  // INT32_MAX: the largest divisor and dividend allowed

uint64_t g_checked = 0;  // divisions compared, so that a test that checks nothing shows

void check_divmod(uint32_t d, uint32_t n) {
  ++g_checked;
  const FastDivmod f = make_fast_divmod(d);
  uint32_t q = 0, r = 0;
  f.divmod(n, q, r);
  if (q != n / d || r != n % d) FAIL("divisor " << d << ", dividend " << n << ": got " << q << " r " << r);
}

// Dividends around the places a wrong magic number shows: 0, multiples of d +-1, the top of the range.
void check_divisor(uint32_t d, std::mt19937& rng) {
  std::vector<uint32_t> ns = {0, 1, 2, d - 1, d, kMax, kMax - 1, kMax - d + 1};
  if (d <= kMax / 2) ns.insert(ns.end(), {d + 1, 2 * d - 1, 2 * d, 2 * d + 1});
  const uint32_t top = kMax / d * d;  // the largest multiple of d in range
  ns.insert(ns.end(), {top, top - 1});
  if (top < kMax) ns.push_back(top + 1);
  std::uniform_int_distribution<uint32_t> any(0, kMax);
  for (int k = 0; k < 64; ++k) ns.push_back(any(rng));
  std::uniform_int_distribution<uint32_t> multiple(0, kMax / d);
  for (int k = 0; k < 32; ++k) {
    const uint32_t m = multiple(rng) * d;
    ns.push_back(m);
    if (m > 0) ns.push_back(m - 1);
    if (m < kMax) ns.push_back(m + 1);
  }
  for (uint32_t n : ns) check_divmod(d, n);
}

TEST_CASE("cuda index math: FastDivmod equals / and %", "[cuda][index]") {
  std::mt19937 rng(2024);
  g_checked = 0;
  for (uint32_t d = 1; d <= 4096; ++d) check_divisor(d, rng);
  for (int b = 12; b <= 31; ++b) {  // powers of two and their neighbours up to INT32_MAX
    const uint64_t p = uint64_t{1} << b;
    for (uint64_t d : {p - 1, p, p + 1, p / 2 + 1, p / 2 * 3})
      if (d >= 1 && d <= kMax) check_divisor(static_cast<uint32_t>(d), rng);
  }
  for (uint32_t d : {kMax, kMax - 1, 2147483629u, 2147483587u, 1000000007u, 65535u, 65537u, 46341u, 641u, 6700417u})
    check_divisor(d, rng);
  std::uniform_int_distribution<uint32_t> any(1, kMax);
  for (int k = 0; k < 2000; ++k) check_divisor(any(rng), rng);
  CHECK(g_checked > 1000000);
}

TEST_CASE("cuda index math: FastDivmod over long dividend sweeps", "[cuda][index]") {
  // Every 997th dividend up to INT32_MAX (and the ones next to it) for divisors of each size.
  uint64_t checked = 0;
  for (uint32_t d : {3u, 7u, 10u, 255u, 768u, 50257u, 1u << 20, 123456789u, kMax}) {
    const FastDivmod f = make_fast_divmod(d);
    for (uint64_t n = 0; n <= kMax; n += 997) {
      for (uint64_t m = n; m <= n + 1 && m <= kMax; ++m) {
        uint32_t q = 0, r = 0;
        f.divmod(static_cast<uint32_t>(m), q, r);
        ++checked;
        if (q != m / d || r != m % d) FAIL("divisor " << d << ", dividend " << m);
      }
    }
  }
  CHECK(checked > 9 * 4000000ull);
}

struct Dims {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;  // one per operand
};

// coalesce_dims on a copy; returns the result as Dims.
Dims coalesced(const Dims& in) {
  int64_t shape[INGOT_MAX_DIMS] = {};
  int64_t strides[3][INGOT_MAX_DIMS] = {};
  const int n = static_cast<int>(in.strides.size());
  for (size_t d = 0; d < in.shape.size(); ++d) {
    shape[d] = in.shape[d];
    for (int k = 0; k < n; ++k) strides[k][d] = in.strides[static_cast<size_t>(k)][d];
  }
  const int nd = coalesce_dims(static_cast<int>(in.shape.size()), shape, strides, n);
  Dims out{std::vector<int64_t>(shape, shape + nd), {}};
  for (int k = 0; k < n; ++k) out.strides.emplace_back(strides[k], strides[k] + nd);
  return out;
}

TEST_CASE("cuda index math: coalesce_dims merges what every operand walks as one", "[cuda][index]") {
  using V = std::vector<int64_t>;
  // contiguous: one dim
  Dims r = coalesced({{4, 6, 5}, {{30, 5, 1}, {30, 5, 1}}});
  CHECK(r.shape == V{120});
  CHECK(r.strides == std::vector<V>{{1}, {1}});
  // a broadcast operand stops the merge of dim 0 only
  r = coalesced({{4, 6, 5}, {{30, 5, 1}, {0, 5, 1}}});
  CHECK(r.shape == V{4, 30});
  CHECK(r.strides == std::vector<V>{{30, 1}, {0, 1}});
  // transposed: nothing merges
  r = coalesced({{5, 7}, {{1, 5}}});
  CHECK(r.shape == V{5, 7});
  CHECK(r.strides == std::vector<V>{{1, 5}});
  // size-1 dims drop out whatever their stride
  r = coalesced({{1, 3, 1, 4}, {{99, 4, 7, 1}}});
  CHECK(r.shape == V{12});
  CHECK(r.strides == std::vector<V>{{1}});
  // a single element: rank 0
  r = coalesced({{1, 1}, {{1, 1}, {0, 0}}});
  CHECK(r.shape.empty());
  // a zero-size dim: {0}
  r = coalesced({{3, 0, 2}, {{2, 2, 1}}});
  CHECK(r.shape == V{0});
  // a column slice (rows of 10, 5 taken) keeps two dims; its inner dims still merge
  r = coalesced({{4, 5, 2}, {{20, 2, 1}}});
  CHECK(r.shape == V{4, 10});
  CHECK(r.strides == std::vector<V>{{20, 1}});
  // an expanded scalar: one dim of stride 0
  r = coalesced({{3, 4}, {{4, 1}, {0, 0}}});
  CHECK(r.shape == V{12});
  CHECK(r.strides == std::vector<V>{{1}, {0}});
  // the maximum rank, all contiguous
  r = coalesced({{2, 2, 2, 2, 2, 2, 2, 2}, {{128, 64, 32, 16, 8, 4, 2, 1}}});
  CHECK(r.shape == V{256});
}

TEST_CASE("cuda index math: fits_int32 bounds the element count and every offset", "[cuda][index]") {
  int64_t shape[INGOT_MAX_DIMS] = {1 << 16, 1 << 14};
  int64_t strides[2][INGOT_MAX_DIMS] = {{1 << 14, 1}, {0, 1}};
  CHECK(fits_int32(2, shape, strides, 2));  // 2^30 elements, offsets up to 2^30 - 1
  shape[0] = 1 << 17;                       // 2^31 elements: too many
  CHECK(!fits_int32(2, shape, strides, 2));
  shape[0] = 3, shape[1] = 5;
  strides[0][0] = int64_t{1} << 30;  // offsets up to 2 * 2^30 + 4: too far
  CHECK(!fits_int32(2, shape, strides, 2));
  strides[0][0] = -(int64_t{1} << 29);  // a negative stride counts by its size
  CHECK(fits_int32(2, shape, strides, 2));
  strides[0][0] = INT64_MIN;
  CHECK(!fits_int32(2, shape, strides, 2));
  CHECK(fits_int32(0, shape, strides, 2));  // rank 0: one element at offset 0
}

// Offsets of row-major index i by plain 64-bit division over the original dims.
std::vector<int64_t> naive_offsets(const Dims& dims, int64_t i) {
  std::vector<int64_t> off(dims.strides.size(), 0);
  for (int d = static_cast<int>(dims.shape.size()) - 1; d >= 0; --d) {
    const int64_t c = i % dims.shape[static_cast<size_t>(d)];
    i /= dims.shape[static_cast<size_t>(d)];
    for (size_t k = 0; k < off.size(); ++k) off[k] += c * dims.strides[k][static_cast<size_t>(d)];
  }
  return off;
}

// A random operand layout over `shape`: contiguous, permuted, sliced with steps, broadcast or
// reversed (negative strides), so that some dims merge and some do not.
std::vector<int64_t> random_strides(const std::vector<int64_t>& shape, std::mt19937& rng) {
  const size_t n = shape.size();
  std::vector<int64_t> strides(n, 0);
  std::vector<size_t> order(n);
  for (size_t d = 0; d < n; ++d) order[d] = d;
  const int kind = static_cast<int>(rng() % 4);
  if (kind == 1) std::shuffle(order.begin(), order.end(), rng);  // a permuted view
  int64_t s = 1;
  for (size_t j = n; j-- > 0;) {
    const size_t d = order[j];
    const int64_t step = kind == 2 ? 1 + static_cast<int64_t>(rng() % 3) : 1;  // a sliced view
    strides[d] = s * step;
    s *= shape[d] * step;
  }
  for (size_t d = 0; d < n; ++d) {
    if (kind == 3 && rng() % 3 == 0) strides[d] = 0;            // broadcast along d
    if (kind == 3 && rng() % 5 == 0) strides[d] = -strides[d];  // reversed along d
  }
  return strides;
}

// Returns how many offsets it compared.
template <int N>
int64_t check_layouts(std::mt19937& rng, int cases) {
  int64_t checked = 0;
  for (int t = 0; t < cases; ++t) {
    Dims dims;
    const int nd = static_cast<int>(rng() % (INGOT_MAX_DIMS + 1));
    for (int d = 0; d < nd; ++d) dims.shape.push_back(rng() % 4 == 0 ? 1 : 1 + static_cast<int64_t>(rng() % 5));
    for (int k = 0; k < N; ++k) dims.strides.push_back(random_strides(dims.shape, rng));
    Indexer<N> ix{};
    ix.ndim = nd;
    for (int d = 0; d < nd; ++d) {
      ix.shape[d] = dims.shape[static_cast<size_t>(d)];
      for (int k = 0; k < N; ++k) ix.strides[k][d] = dims.strides[static_cast<size_t>(k)][static_cast<size_t>(d)];
    }
    const Indexer<N> original = ix;  // 64-bit math over the original dims
    flatten(ix);
    REQUIRE(ix.index32 == 1);  // small shapes: the 32-bit path is what runs
    REQUIRE(ix.ndim <= nd);
    int64_t numel = 1;
    for (int64_t e : dims.shape) numel *= e;
    REQUIRE(indexer_numel(ix) == numel);
    for (int64_t i = 0; i < numel; ++i) {
      const std::vector<int64_t> want = naive_offsets(dims, i);
      int64_t a[N], b[N];
      original.offsets(i, a);
      ix.offsets(i, b);
      ++checked;
      for (int k = 0; k < N; ++k) {
        if (a[k] != want[static_cast<size_t>(k)] || b[k] != want[static_cast<size_t>(k)])
          FAIL("case " << t << ", index " << i << ", operand " << k << ": want " << want[static_cast<size_t>(k)]
                       << ", 64-bit " << a[k] << ", flattened " << b[k]);
      }
    }
  }
  return checked;
}

TEST_CASE("cuda index math: flattened Indexer offsets equal plain row-major offsets", "[cuda][index]") {
  std::mt19937 rng(7);
  int64_t checked = check_layouts<1>(rng, 300);
  checked += check_layouts<2>(rng, 300);
  checked += check_layouts<3>(rng, 300);
  checked += check_layouts<4>(rng, 200);
  CHECK(checked > 100000);
}

TEST_CASE("cuda index math: large shapes keep 64-bit math and still merge", "[cuda][index]") {
  Indexer<2> ix{};
  ix.ndim = 3;
  const int64_t shape[] = {3, int64_t{1} << 20, 1 << 12};  // 3 * 2^32 elements
  for (int d = 0; d < 3; ++d) ix.shape[d] = shape[d];
  ix.strides[0][0] = int64_t{1} << 32, ix.strides[0][1] = 1 << 12, ix.strides[0][2] = 1;
  ix.strides[1][0] = 0, ix.strides[1][1] = 1 << 12, ix.strides[1][2] = 1;  // broadcast along dim 0
  flatten(ix);
  REQUIRE(ix.index32 == 0);
  REQUIRE(ix.ndim == 2);
  CHECK(ix.shape[1] == int64_t{1} << 32);
  for (int64_t i : {int64_t{0}, int64_t{1} << 32, (int64_t{3} << 32) - 1, (int64_t{1} << 33) + 12345}) {
    int64_t off[2];
    ix.offsets(i, off);
    CHECK(off[0] == i);
    CHECK(off[1] == i % (int64_t{1} << 32));
  }
}

}  // namespace
}  // namespace ingot::cuda
