// cpu_onednn's in-place claims (ABI 2.6 runs_in_place): each op it says may write its output over an
// input gives, written over that input, the bits it gives into a fresh buffer; and it declines the
// pairs its kernels cannot overwrite (SUB's second operand, relu_bwd's x, another layout).
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "ingot/ops/linalg.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

using test::random_tensor;

const Backend* onednn() { return test::plugin_backend_or_skip("cpu_onednn", "cpu_onednn"); }

/// A conv output: cpu_onednn gives it its blocked layout (4 channels: padded blocks).
Tensor blocked_activation(uint64_t seed, int64_t channels = 16) {
  Conv2dParams p;
  p.padding = {1, 1};
  const Tensor x = random_tensor({2, 3, 6, 6}, DType::F32, seed);
  const Tensor w = random_tensor({channels, 3, 3, 3}, DType::F32, seed + 1);
  return conv2d(x, w, Tensor(), p);
}

std::vector<ingot_tensor_desc> descs_of(const std::vector<Tensor>& ts) {
  std::vector<ingot_tensor_desc> d;
  for (const Tensor& t : ts) d.push_back(make_desc(t));
  return d;
}

/// Whether the backend lets op's output go over input `over` (the output shaped like it).
bool claims(const Backend& be, OpKind op, const std::vector<Tensor>& inputs, int over) {
  const std::vector<ingot_tensor_desc> in = descs_of(inputs);
  const ingot_tensor_desc out = in[static_cast<size_t>(over)];
  return be.runs_in_place(op, in.data(), static_cast<int>(in.size()), &out, 1, 0, over, nullptr);
}

/// Runs op into a fresh buffer, then over input `over`: true when both give the same bytes.
bool same_in_place(const Backend& be, OpKind op, const std::vector<Tensor>& inputs, int over) {
  const std::vector<ingot_tensor_desc> in = descs_of(inputs);
  ingot_tensor_desc fresh = in[static_cast<size_t>(over)];
  const size_t nbytes = static_cast<size_t>(fresh.nbytes);
  const Tensor buffer = Tensor::empty({static_cast<int64_t>(nbytes)}, DType::U8);
  fresh.data = buffer.storage()->data();
  run_descs_on(be, op, in, {fresh}, nullptr);
  run_descs_on(be, op, in, {in[static_cast<size_t>(over)]}, nullptr);
  return std::memcmp(buffer.storage()->data(), in[static_cast<size_t>(over)].data, nbytes) == 0;
}

}  // namespace

TEST_CASE("cpu_onednn in place: elementwise ops written over their inputs give their out-of-place bits",
          "[onednn]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  for (const int64_t channels : {int64_t{16}, int64_t{4}})
  for (const bool blocked : {true, false}) {
    INFO((blocked ? "blocked" : "dense") << " tensors of " << channels << " channels");
    const auto make = [&](uint64_t seed) {
      return blocked ? blocked_activation(seed, channels) : random_tensor({2, channels, 6, 6}, DType::F32, seed);
    };
    REQUIRE(make(1).is_opaque() == blocked);
    for (const OpKind op : {INGOT_OP_ADD, INGOT_OP_ADD_RELU, INGOT_OP_MUL, INGOT_OP_SUB}) {
      for (const int over : {0, 1}) {
        INFO("op " << op_info(op).name << " over input " << over);
        const std::vector<Tensor> in{make(10), make(20)};
        if (op == INGOT_OP_SUB && over == 1) {
          CHECK_FALSE(claims(*be, op, in, over));  // oneDNN overwrites only src0; a - b != b - a
          continue;
        }
        if (op == INGOT_OP_ADD_RELU && blocked && channels % 8 != 0) {
          CHECK_FALSE(claims(*be, op, in, over));  // padded blocks: oneDNN's post-op kernel fails in place
          continue;
        }
        REQUIRE(claims(*be, op, in, over));
        CHECK(same_in_place(*be, op, in, over));
      }
    }
    const std::vector<Tensor> x{make(30)};
    REQUIRE(claims(*be, INGOT_OP_RELU, x, 0));
    CHECK(same_in_place(*be, INGOT_OP_RELU, x, 0));
    const std::vector<Tensor> grad_x{make(40), make(50)};
    REQUIRE(claims(*be, INGOT_OP_RELU_BWD, grad_x, 0));
    CHECK(same_in_place(*be, INGOT_OP_RELU_BWD, grad_x, 0));
    CHECK_FALSE(claims(*be, INGOT_OP_RELU_BWD, grad_x, 1));  // x: the kernel reads it after writing
    for (const int over : {0, 1}) {
      const std::vector<Tensor> grads_y{make(60), make(70), make(80)};
      REQUIRE(claims(*be, INGOT_OP_ADD_RELU_BWD, grads_y, over));
      CHECK(same_in_place(*be, INGOT_OP_ADD_RELU_BWD, grads_y, over));
    }
  }
}

TEST_CASE("cpu_onednn in place: declined across layouts and dtypes and for ops that are not elementwise",
          "[onednn]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const Tensor blocked = blocked_activation(1);
  const Tensor dense = random_tensor({2, 16, 6, 6}, DType::F32, 2);
  std::vector<ingot_tensor_desc> in = descs_of({blocked, dense});
  ingot_tensor_desc out = in[1];  // dense, over the dense input: fine
  CHECK(be->runs_in_place(INGOT_OP_ADD, in.data(), 2, &out, 1, 0, 1, nullptr));
  out = in[1];  // a dense output over the blocked input: another layout
  CHECK_FALSE(be->runs_in_place(INGOT_OP_ADD, in.data(), 2, &out, 1, 0, 0, nullptr));
  const Tensor half = random_tensor({2, 16, 6, 6}, DType::BF16, 3);
  in = descs_of({dense});
  out = make_desc(half);  // bf16 over f32: other bytes
  CHECK_FALSE(be->runs_in_place(INGOT_OP_RELU, in.data(), 1, &out, 1, 0, 0, nullptr));
  const Tensor w = random_tensor({16, 16, 1, 1}, DType::F32, 4);
  in = descs_of({dense, w});
  out = in[0];  // a 1x1 convolution reads every input channel for each output element
  CHECK_FALSE(be->runs_in_place(INGOT_OP_CONV2D, in.data(), 2, &out, 1, 0, 0, nullptr));
}

}  // namespace ingot
