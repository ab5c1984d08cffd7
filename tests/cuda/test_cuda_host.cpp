// The cuda plugin's host-side decisions, without a GPU: which views a copy must stage, what the
// kernel families' supports() accept or decline, how SORT / TOPK / SCATTER_ADD route to the radix
// sort, and the device-error messages and INGOT_CUDA_SYNC switch. Linked from the kernel objects.
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "device_errors.h"
#include "host_desc.h"
#include "ingot/runtime/op_info.h"
#include "kernels.h"
#include "overlap.h"
#include "sort_keys.h"
#include "sort_plan.h"

namespace ingot::cuda {
namespace {

/// A strided CUDA descriptor (row-major strides unless given) `offset` elements into a buffer.
ingot_tensor_desc desc(std::initializer_list<int64_t> shape, int32_t dtype = INGOT_F32,
                       std::initializer_list<int64_t> strides = {}, int64_t offset = 0) {
  return test::host_desc(shape, dtype, strides, offset);
}

/// An attribute struct that claims to be 8 bytes shorter than this build's (an older plugin ABI).
template <class A>
A short_attr() {
  A a = make_attr<A>();
  a.struct_size = sizeof(A) - 8;
  return a;
}

sdk::OpCall call(int32_t op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                 const void* attrs) {
  return sdk::OpCall{op, in, n_in, out, n_out, attrs};
}

TEST_CASE("cuda host: may_overlap sees shifted, transposed and broadcast views, not disjoint or empty ones", "[cuda]") {
  // x = 10 floats: x[1:] and x[:-1] share 8 elements.
  CHECK(may_overlap(desc({9}, INGOT_F32, {1}, 1), desc({9}, INGOT_F32, {1}, 0)));
  // Disjoint halves, and halves that only touch at a boundary.
  CHECK_FALSE(may_overlap(desc({5}, INGOT_F32, {1}, 0), desc({5}, INGOT_F32, {1}, 5)));
  CHECK_FALSE(may_overlap(desc({2, 3}), desc({2, 3}, INGOT_F32, {3, 1}, 6)));
  // A 4x4 matrix and its transpose, and a column of it against a row (spans intersect).
  CHECK(may_overlap(desc({4, 4}), desc({4, 4}, INGOT_F32, {1, 4})));
  CHECK(may_overlap(desc({4}, INGOT_F32, {4}, 1), desc({4}, INGOT_F32, {1}, 4)));
  // Even and odd elements interleave without sharing one: conservatively staged.
  CHECK(may_overlap(desc({5}, INGOT_F32, {2}, 0), desc({5}, INGOT_F32, {2}, 1)));
  // A broadcast source (stride 0) inside the destination.
  CHECK(may_overlap(desc({3, 4}), desc({3, 4}, INGOT_F32, {0, 1}, 4)));
  // Negative strides span downwards from the first element.
  CHECK(may_overlap(desc({3}, INGOT_F32, {-1}, 2), desc({1}, INGOT_F32, {1}, 0)));
  CHECK_FALSE(may_overlap(desc({3}, INGOT_F32, {-1}, 2), desc({1}, INGOT_F32, {1}, 3)));
  // Zero-size views overlap nothing, not even themselves.
  CHECK_FALSE(may_overlap(desc({0, 4}), desc({0, 4})));
  CHECK_FALSE(may_overlap(desc({4}), desc({4, 0})));
  // Different element sizes over the same bytes: two halves of one f64 are inside it.
  CHECK(may_overlap(desc({1}, INGOT_F64), desc({1}, INGOT_F32, {1}, 1)));
  CHECK_FALSE(may_overlap(desc({1}, INGOT_F64), desc({1}, INGOT_F32, {1}, 2)));
}

TEST_CASE("cuda host: COPY and CAST claim broadcasting views of matching dtypes", "[cuda]") {
  const ingot_tensor_desc out = desc({3, 4}), row = desc({4}), half_row = desc({4}, INGOT_F16), wrong = desc({5});
  CHECK(creation_supports(call(INGOT_OP_COPY, &row, 1, &out, 1, nullptr)));
  CHECK_FALSE(creation_supports(call(INGOT_OP_COPY, &half_row, 1, &out, 1, nullptr)));
  CHECK(creation_supports(call(INGOT_OP_CAST, &half_row, 1, &out, 1, nullptr)));
  CHECK_FALSE(creation_supports(call(INGOT_OP_COPY, &wrong, 1, &out, 1, nullptr)));
}

TEST_CASE("cuda host: supports() declines a missing or short attribute struct", "[cuda]") {
  const ingot_tensor_desc x = desc({4, 6}), f16 = desc({4, 6}, INGOT_F16), mask = desc({4, 6}, INGOT_BOOL);
  const ingot_tensor_desc idx = desc({4, 6}, INGOT_I64), idx1 = desc({3}, INGOT_I64), rows = desc({3, 6});
  const ingot_tensor_desc top_v = desc({4, 2}), top_i = desc({4, 2}, INGOT_I64), sort_i = desc({4, 6}, INGOT_I64);
  const ingot_tensor_desc padded = desc({4, 8});
  using Fn = bool (*)(const sdk::OpCall&);
  struct Case {
    const char* what;
    Fn fn;
    int32_t op;
    std::vector<ingot_tensor_desc> in, out;
    const void* good;
    const void* short_one;
  };
  const auto scalar_a = make_attr<ingot_attr_scalar>(), scalar_s = short_attr<ingot_attr_scalar>();
  const auto arange_a = make_attr<ingot_attr_arange>(), arange_s = short_attr<ingot_attr_arange>();
  auto rng_a = make_attr<ingot_attr_rng>();
  rng_a.a = 0.25;
  const auto rng_s = short_attr<ingot_attr_rng>();
  const auto sort_a = make_attr<ingot_attr_sort>(), sort_s = short_attr<ingot_attr_sort>();
  auto topk_a = make_attr<ingot_attr_topk>();
  topk_a.k = 2, topk_a.axis = -1;
  auto topk_s = short_attr<ingot_attr_topk>();
  topk_s.k = 2, topk_s.axis = -1;
  const auto axis_a = make_attr<ingot_attr_axis>();
  auto axis_s = make_attr<ingot_attr_axis>();
  axis_s.struct_size = sizeof(ingot_attr_axis) - 4;
  auto pad_a = make_attr<ingot_attr_pad>();
  pad_a.pads[2] = 1, pad_a.pads[3] = 1;  // pads[2d], pads[2d + 1]: dim 1 grows from 6 to 8
  auto pad_s = pad_a;
  pad_s.struct_size = 8;
  auto sgd_a = make_attr<ingot_attr_sgd>();
  sgd_a.momentum = 0.9;
  auto sgd_s = sgd_a;
  sgd_s.struct_size = 8;
  auto adam_a = make_attr<ingot_attr_adam>();
  adam_a.step = 1;
  auto adam_s = adam_a;
  adam_s.struct_size = 8;
  const std::vector<Case> cases = {
      {"fill", creation_supports, INGOT_OP_FILL, {}, {x}, &scalar_a, &scalar_s},
      {"arange", creation_supports, INGOT_OP_ARANGE, {}, {x}, &arange_a, &arange_s},
      {"uniform", rng_supports, INGOT_OP_UNIFORM, {}, {x}, &rng_a, &rng_s},
      {"normal", rng_supports, INGOT_OP_NORMAL, {}, {f16}, &rng_a, &rng_s},
      {"bernoulli", rng_supports, INGOT_OP_BERNOULLI, {}, {mask}, &rng_a, &rng_s},
      {"dropout", rng_supports, INGOT_OP_DROPOUT, {x}, {x, mask}, &rng_a, &rng_s},
      {"sort", sort_supports, INGOT_OP_SORT, {x}, {x, sort_i}, &sort_a, &sort_s},
      {"topk", sort_supports, INGOT_OP_TOPK, {x}, {top_v, top_i}, &topk_a, &topk_s},
      {"gather", index_supports, INGOT_OP_GATHER, {x, idx}, {x}, &axis_a, &axis_s},
      {"index_select", index_supports, INGOT_OP_INDEX_SELECT, {x, idx1}, {rows}, &axis_a, &axis_s},
      {"scatter_add", index_supports, INGOT_OP_SCATTER_ADD, {x, idx, x}, {x}, &axis_a, &axis_s},
      {"concat", index_supports, INGOT_OP_CONCAT, {x, x}, {desc({8, 6})}, &axis_a, &axis_s},
      {"pad", index_supports, INGOT_OP_PAD, {x}, {padded}, &pad_a, &pad_s},
      {"sgd_update", optim_supports, INGOT_OP_SGD_UPDATE, {x, x, x}, {}, &sgd_a, &sgd_s},
      {"adam_update", optim_supports, INGOT_OP_ADAM_UPDATE, {x, x, x, x}, {}, &adam_a, &adam_s},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const auto with = [&](const void* a) {
      return c.fn(
          call(c.op, c.in.data(), static_cast<int>(c.in.size()), c.out.data(), static_cast<int>(c.out.size()), a));
    };
    CHECK(with(c.good));
    CHECK_FALSE(with(nullptr));
    CHECK_FALSE(with(c.short_one));
  }
}

TEST_CASE("cuda host: supports() declines host tensors and dtypes the ops do not define", "[cuda]") {
  const auto scalar_a = make_attr<ingot_attr_scalar>();
  const auto arange_a = make_attr<ingot_attr_arange>();
  const auto rng_a = make_attr<ingot_attr_rng>();
  ingot_tensor_desc host = desc({4});
  host.device_kind = INGOT_DEVICE_CPU;
  ingot_tensor_desc bad_dtype = desc({4});
  bad_dtype.dtype = INGOT_DTYPE_COUNT;
  const ingot_tensor_desc flags = desc({4}, INGOT_BOOL), ints = desc({4}, INGOT_I32);
  CHECK_FALSE(creation_supports(call(INGOT_OP_FILL, nullptr, 0, &host, 1, &scalar_a)));
  CHECK_FALSE(creation_supports(call(INGOT_OP_FILL, nullptr, 0, &bad_dtype, 1, &scalar_a)));
  CHECK(creation_supports(call(INGOT_OP_FILL, nullptr, 0, &flags, 1, &scalar_a)));
  CHECK_FALSE(creation_supports(call(INGOT_OP_ARANGE, nullptr, 0, &flags, 1, &arange_a)));  // arange is numeric
  CHECK_FALSE(rng_supports(call(INGOT_OP_UNIFORM, nullptr, 0, &host, 1, &rng_a)));
  CHECK_FALSE(rng_supports(call(INGOT_OP_UNIFORM, nullptr, 0, &ints, 1, &rng_a)));  // uniform is floating
  CHECK(rng_supports(call(INGOT_OP_BERNOULLI, nullptr, 0, &ints, 1, &rng_a)));
}

TEST_CASE("cuda host: SORT and TOPK take the rank kernel for short lanes, the radix sort beyond", "[cuda]") {
  // Short lanes, and many lanes of moderate length while the total rank work stays small.
  CHECK(plan_sort(1, 1, INGOT_F32).path == SortPath::Rank);
  CHECK(plan_sort(64, 1024, INGOT_F32).path == SortPath::Rank);
  CHECK(plan_sort(1, kRankMaxLane, INGOT_F64).path == SortPath::Rank);
  CHECK(plan_sort(100000, 64, INGOT_F32).path == SortPath::Radix64);  // 100k x 64^2 > kRankMaxWork
  // 100k values in one lane: the 32-bit key alone.
  const SortPlan one = plan_sort(1, 100000, INGOT_F32);
  CHECK(one.path == SortPath::Radix32);
  CHECK(one.end_bit == 32);
  // f16 keys are 16 bits: 1000 lanes fit beside them in 32.
  const SortPlan halves = plan_sort(1000, 5000, INGOT_F16);
  CHECK(halves.path == SortPath::Radix32);
  CHECK(halves.lane_bits == 10);
  CHECK(halves.end_bit == 26);
  CHECK(plan_sort(3, 100000, INGOT_U8).end_bit == 10);
  // f32 keys with 300 lanes need 41 bits.
  const SortPlan wide = plan_sort(300, 5000, INGOT_F32);
  CHECK(wide.path == SortPath::Radix64);
  CHECK(wide.end_bit == 41);
  // 64-bit keys: alone in one lane, two passes (key, then lane) in several.
  CHECK(plan_sort(1, 100000, INGOT_I64).path == SortPath::Radix64);
  CHECK(plan_sort(1, 100000, INGOT_I64).end_bit == 64);
  CHECK(plan_sort(3, 100000, INGOT_F64).path == SortPath::RadixTwoPass);
  // Positions are 32-bit: 2^32 elements are declined.
  CHECK(plan_sort(1, int64_t{1} << 32, INGOT_F32).path == SortPath::Decline);
  CHECK(plan_sort(int64_t{1} << 16, int64_t{1} << 16, INGOT_F32).path == SortPath::Decline);
  CHECK(plan_sort(int64_t{1} << 16, (int64_t{1} << 16) - 1, INGOT_F32).path == SortPath::Radix64);
  CHECK(plan_sort(0, 100000, INGOT_F32).path == SortPath::Rank);  // nothing to sort

  const auto sort_a = make_attr<ingot_attr_sort>();
  const ingot_tensor_desc big = desc({int64_t{1} << 32}), big_i = desc({int64_t{1} << 32}, INGOT_I64);
  const ingot_tensor_desc outs[] = {big, big_i};
  CHECK_FALSE(sort_supports(call(INGOT_OP_SORT, &big, 1, outs, 2, &sort_a)));
  const ingot_tensor_desc lanes = desc({3, 100000}, INGOT_F64), lanes_i = desc({3, 100000}, INGOT_I64);
  const ingot_tensor_desc lane_outs[] = {lanes, lanes_i};
  CHECK(sort_supports(call(INGOT_OP_SORT, &lanes, 1, lane_outs, 2, &sort_a)));
}

/// Requires that `order_key` ranks the groups in order, and the members of one group equally
/// (the reference's ties): groups[g] holds raw elements of one dtype.
template <class E>
void require_key_order(int32_t dtype, const std::vector<std::vector<E>>& groups) {
  uint64_t previous = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const uint64_t key = order_key(groups[g].data(), dtype, 0);
    INFO("group " << g);
    if (g > 0) CHECK(key > previous);
    for (size_t i = 1; i < groups[g].size(); ++i)
      CHECK(order_key(groups[g].data(), dtype, static_cast<int64_t>(i)) == key);
    if (sort_key_bits(dtype) < 64) CHECK((key >> sort_key_bits(dtype)) == 0);  // fits the width plan_sort assumes
    previous = key;
  }
}

TEST_CASE("cuda host: radix sort keys order like the reference: -0 == +0, NaNs tie above +inf", "[cuda]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  require_key_order<double>(INGOT_F64, {{-inf},
                                        {-1e300},
                                        {-1.0},
                                        {-std::numeric_limits<double>::denorm_min()},
                                        {0.0, -0.0},
                                        {std::numeric_limits<double>::denorm_min()},
                                        {0.5},
                                        {1e300},
                                        {inf},
                                        {nan, -nan}});
  const float finf = std::numeric_limits<float>::infinity(), fnan = std::numeric_limits<float>::quiet_NaN();
  require_key_order<float>(INGOT_F32,
                           {{-finf}, {-2.5f}, {-1e-45f}, {0.0f, -0.0f}, {1e-45f}, {3.0f}, {finf}, {fnan, -fnan}});
  // f16 and bf16 as bit patterns: -inf, -1, -denormal, -0 / +0, +denormal, 1, 2, +inf, NaNs.
  require_key_order<uint16_t>(INGOT_F16, {{0xfc00},
                                          {0xbc00},
                                          {0x8001},
                                          {0x0000, 0x8000},
                                          {0x0001},
                                          {0x3c00},
                                          {0x4000},
                                          {0x7c00},
                                          {0x7e00, 0xfe00, 0x7c01}});
  require_key_order<uint16_t>(INGOT_BF16, {{0xff80},
                                           {0xbf80},
                                           {0x8001},
                                           {0x0000, 0x8000},
                                           {0x0001},
                                           {0x3f80},
                                           {0x4000},
                                           {0x7f80},
                                           {0x7fc0, 0xffc0, 0x7f81}});
  require_key_order<int8_t>(INGOT_I8, {{-128}, {-1}, {0}, {1}, {127}});
  require_key_order<uint8_t>(INGOT_U8, {{0}, {1}, {200}, {255}});
  require_key_order<int32_t>(INGOT_I32, {{INT32_MIN}, {-7}, {0}, {7}, {INT32_MAX}});
  require_key_order<int64_t>(INGOT_I64, {{INT64_MIN}, {-7}, {0}, {7}, {INT64_MAX}});
}

TEST_CASE("cuda host: SCATTER_ADD's sort key widths and the sizes it declines", "[cuda]") {
  CHECK(bits_for(0) == 0);
  CHECK(bits_for(1) == 1);
  CHECK(bits_for(255) == 8);
  CHECK(bits_for(256) == 9);
  CHECK(bits_for(~uint64_t{0}) == 64);
  // Embedding backward, 8k rows of width 768 into 50k: 768 lanes x 50,001 keys < 2^26.
  CHECK(scatter_add_key_bits(768, 50000, 8192 * 768) == 26);
  CHECK(scatter_add_key_bits(1, 0, 5) == 1);  // every index out of range of an empty dim
  CHECK(scatter_add_key_bits(int64_t{1} << 31, (int64_t{1} << 31) - 1, 1000) == 62);
  CHECK(scatter_add_key_bits(int64_t{1} << 40, int64_t{1} << 40, 1000) == -1);  // the key overflows
  CHECK(scatter_add_key_bits(1, INT64_MAX, 10) == -1);
  CHECK(scatter_add_key_bits(4, 10, int64_t{1} << 32) == -1);  // 32-bit positions

  const auto axis_a = make_attr<ingot_attr_axis>();
  const ingot_tensor_desc self = desc({8, 4}), index = desc({int64_t{1} << 32, 1}, INGOT_I64),
                          src = desc({int64_t{1} << 32, 1});
  const ingot_tensor_desc ins[] = {self, index, src};
  CHECK_FALSE(index_supports(call(INGOT_OP_SCATTER_ADD, ins, 3, &self, 1, &axis_a)));
}

TEST_CASE("cuda host: device error messages name the op, the index and the valid range", "[cuda]") {
  const DeviceErrorRecord gather{kIndexOutOfRange, INGOT_OP_GATHER, 1000003, 50};
  const std::string later = device_error_message(gather, 0, false);
  CHECK_THAT(later, Catch::StartsWith("gather: index 1000003 is out of range for a dim of size 50"));
  CHECK_THAT(later, Catch::Contains("valid indices are 0 to 49"));
  CHECK_THAT(later, Catch::Contains("cuda:0"));
  CHECK_THAT(later, Catch::Contains("set INGOT_CUDA_SYNC=1"));
  CHECK(later.find('\n') == std::string::npos);
  const DeviceErrorRecord scatter{kIndexOutOfRange, INGOT_OP_SCATTER_ADD, -1, 0};
  const std::string now = device_error_message(scatter, 3, true);
  CHECK_THAT(now, Catch::StartsWith("scatter_add: index -1 is out of range for a dim of size 0"));
  CHECK_THAT(now, Catch::Contains("no valid index"));
  CHECK_THAT(now, Catch::Contains("cuda:3"));
  CHECK_THAT(now, Catch::Contains("right after the op"));
}

TEST_CASE("cuda host: INGOT_CUDA_SYNC is on for 1 and off when unset, empty or 0", "[cuda]") {
  CHECK_FALSE(sync_after_each_op(nullptr));
  CHECK_FALSE(sync_after_each_op(""));
  CHECK_FALSE(sync_after_each_op("0"));
  CHECK_FALSE(sync_after_each_op("off"));
  CHECK_FALSE(sync_after_each_op("false"));
  CHECK(sync_after_each_op("1"));
  CHECK(sync_after_each_op("yes"));
}

TEST_CASE("cuda host: op names come from the op table", "[cuda]") {
  CHECK(std::string(op_name(INGOT_OP_SCATTER_ADD)) == "scatter_add");
  CHECK(std::string(op_name(INGOT_OP_INDEX_SELECT)) == "index_select");
  CHECK(std::string(op_name(-1)) == "unknown op");
  CHECK(std::string(op_name(INGOT_OP_COUNT)) == "unknown op");
}

}  // namespace
}  // namespace ingot::cuda
