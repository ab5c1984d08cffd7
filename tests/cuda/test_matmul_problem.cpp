// How the cuda plugin maps a MATMUL onto cuBLASLt, on descriptors alone (no GPU): transposes from
// strides, batch dims that collapse or loop, epilogues, and the plan key with its hash.
#include <catch2/catch.hpp>

#include <unordered_set>
#include <vector>

#include "matmul_problem.h"
#include "plan_key.h"

namespace ingot::cuda {
namespace {

// A row-major f32 tensor on cuda:0 at a fake (never dereferenced) address.
ingot_tensor_desc tensor(std::vector<int64_t> shape, uintptr_t address = 0x10000) {
  ingot_tensor_desc d{};
  d.struct_size = sizeof(d);
  d.dtype = INGOT_F32;
  d.ndim = static_cast<int32_t>(shape.size());
  int64_t stride = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    d.shape[i] = shape[static_cast<size_t>(i)];
    d.strides[i] = stride;
    stride *= d.shape[i];
  }
  d.device_kind = INGOT_DEVICE_CUDA;
  d.layout = INGOT_LAYOUT_STRIDED;
  d.data = reinterpret_cast<void*>(address);
  return d;
}

// The last two dims swapped as a view (a transposed operand).
ingot_tensor_desc transposed(ingot_tensor_desc d) {
  const int r = d.ndim - 2, c = d.ndim - 1;
  std::swap(d.shape[r], d.shape[c]);
  std::swap(d.strides[r], d.strides[c]);
  return d;
}

struct Call {
  ingot_tensor_desc in[3];
  ingot_tensor_desc out;
  ingot_attr_matmul attr{sizeof(ingot_attr_matmul), INGOT_ABI_MINOR, 0, INGOT_ACT_NONE};
  sdk::OpCall op(int n_in = 2) const { return sdk::OpCall{INGOT_OP_MATMUL, in, n_in, &out, 1, &attr}; }
};

MatmulKey key_of(const Call& c, int n_in = 2, bool tf32 = false) {
  MatmulProblem p;
  REQUIRE(describe_matmul(c.op(n_in), p));
  return matmul_key(p, 0, tf32, sdk::data_ptr<const void>(c.in[0]), sdk::data_ptr<const void>(c.in[1]),
                    sdk::data_ptr<const void>(c.out));
}

TEST_CASE("cuda matmul (host): strides pick cuBLAS ops, batch dims collapse or loop", "[cuda][matmul]") {
  Call c{{tensor({4, 5, 3}), tensor({3, 7})}, tensor({4, 5, 7})};
  MatmulProblem p;
  REQUIRE(describe_matmul(c.op(), p));
  CHECK(p.m == 5);
  CHECK(p.n == 7);
  CHECK(p.k == 3);
  CHECK(p.batch == 4);
  CHECK_FALSE(p.looped);
  CHECK(p.sa == 15);
  CHECK(p.sb == 0);  // b broadcasts over the batch
  CHECK(p.sc == 35);
  CHECK(p.a_lt.op == CUBLAS_OP_N);  // cuBLAS's A is our row-major b, stored as [7, 3] column-major
  CHECK(p.a_lt.rows == 7);
  CHECK(p.a_lt.ld == 7);
  CHECK(p.b_lt.op == CUBLAS_OP_N);
  CHECK(p.epilogue == CUBLASLT_EPILOGUE_DEFAULT);

  c.in[1] = transposed(tensor({7, 3}));  // b = w^T as in linear(): cuBLAS transposes it
  REQUIRE(describe_matmul(c.op(), p));
  CHECK(p.a_lt.op == CUBLAS_OP_T);
  CHECK(p.a_lt.ld == 3);

  // A batch of transposed views [2, 3] of a [3, 2, ...] tensor: strides do not flatten.
  Call loop{{tensor({2, 3, 5, 3}), tensor({3, 4})}, tensor({2, 3, 5, 4})};
  std::swap(loop.in[0].shape[0], loop.in[0].shape[1]);
  std::swap(loop.in[0].strides[0], loop.in[0].strides[1]);
  loop.out = tensor({3, 2, 5, 4});
  REQUIRE(describe_matmul(loop.op(), p));
  CHECK(p.looped);

  c.attr.has_bias = 1;
  c.attr.activation = INGOT_ACT_RELU;
  c.in[2] = tensor({7});
  REQUIRE(describe_matmul(c.op(3), p));
  CHECK(p.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS);

  Call empty{{tensor({0, 3}), tensor({3, 7})}, tensor({0, 7})};
  CHECK_FALSE(describe_matmul(empty.op(), p));
}

TEST_CASE("cuda matmul (host): the plan key tells apart what the heuristic sees, and only that", "[cuda][matmul]") {
  const Call base{{tensor({64, 32}, 0x10000), tensor({32, 16}, 0x20000)}, tensor({64, 16}, 0x30000)};
  const MatmulKey k = key_of(base);
  const PlanKeyHash<MatmulKey> hash;
  const PlanKeyEqual<MatmulKey> equal;

  Call same = base;  // other addresses with the same alignment: the same plan
  same.in[0].data = reinterpret_cast<void*>(0x90000);
  CHECK(equal(key_of(same), k));
  CHECK(hash(key_of(same)) == hash(k));

  std::vector<MatmulKey> different;
  Call t = base;
  t.in[1] = transposed(tensor({16, 32}, 0x20000));
  different.push_back(key_of(t));
  Call misaligned = base;
  misaligned.in[0].byte_offset = 4;  // 4-byte aligned operand: another kernel family
  different.push_back(key_of(misaligned));
  Call bigger = base;
  bigger.in[0] = tensor({65, 32}, 0x10000);
  bigger.out = tensor({65, 16}, 0x30000);
  different.push_back(key_of(bigger));
  Call relu = base;
  relu.attr.activation = INGOT_ACT_RELU;
  different.push_back(key_of(relu));
  different.push_back(key_of(base, 2, true));  // TF32
  Call half = base;
  for (ingot_tensor_desc* d : {&half.in[0], &half.in[1], &half.out}) d->dtype = INGOT_F16;
  different.push_back(key_of(half));

  std::unordered_set<size_t> hashes{hash(k)};
  for (const MatmulKey& d : different) {
    CHECK_FALSE(equal(d, k));
    hashes.insert(hash(d));
  }
  CHECK(hashes.size() == different.size() + 1);

  MatmulProblem p;
  REQUIRE(describe_matmul(half.op(), p));
  CHECK(matmul_key(p, 0, true, half.in[0].data, half.in[1].data, half.out.data).tf32 == 0);  // f32 only
  CHECK(matmul_key(p, 1, false, half.in[0].data, half.in[1].data, half.out.data).device == 1);
}

}  // namespace
}  // namespace ingot::cuda
