// Device tensors through core on the cuda backend: host <-> device copies, a few ops against the
// reference, Philox draws bit-identical to the CPU. Skipped without a GPU.
#include <catch2/catch.hpp>

#include "cuda_plugin_path.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};

using test::gpu_ready;

// Used by run_if_cuda.cmake: passes when the backend is usable, skips with the reason otherwise.
TEST_CASE("cuda plugin: available", "[.][cuda-available]") {
  if (!gpu_ready()) return;
  SUCCEED("cuda backend available");
}

TEST_CASE("cuda tensors: host -> device -> host round trip", "[cuda]") {
  if (!gpu_ready()) return;
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::I64, DType::Bool}) {
    const Tensor x = test::random_tensor({3, 5, 7}, dt, 11);
    const Tensor back = x.to(kGpu).to(Device::cpu());
    INGOT_REQUIRE_CLOSE(back, x, 0.0, 0.0);
  }
}

TEST_CASE("cuda tensors: broadcast add, matmul and softmax match the CPU", "[cuda]") {
  if (!gpu_ready()) return;
  const Tensor a = test::random_tensor({4, 1, 6}, DType::F32, 1), b = test::random_tensor({3, 6}, DType::F32, 2);
  INGOT_REQUIRE_CLOSE(add(a.to(kGpu), b.to(kGpu)).to(Device::cpu()), add(a, b), 1e-6, 1e-6);
  const Tensor m = test::random_tensor({2, 33, 17}, DType::F32, 3), n = test::random_tensor({17, 9}, DType::F32, 4);
  INGOT_REQUIRE_CLOSE(matmul(m.to(kGpu), n.to(kGpu)).to(Device::cpu()), matmul(m, n), 1e-5, 1e-5);
  INGOT_REQUIRE_CLOSE(softmax(m.to(kGpu), -1).to(Device::cpu()), softmax(m, -1), 1e-6, 1e-5);
}

TEST_CASE("cuda tensors: uniform and bernoulli draws are bit-identical to the CPU", "[cuda]") {
  if (!gpu_ready()) return;
  ingot_attr_rng attr{sizeof(ingot_attr_rng), INGOT_ABI_MINOR, 1234, 77, -2.0, 3.0};
  for (OpKind op : {INGOT_OP_UNIFORM, INGOT_OP_BERNOULLI}) {
    if (op == INGOT_OP_BERNOULLI) attr.a = 0.3;
    const std::vector<OutputSpec> spec = {{Shape{1001}, DType::F32}};
    const Tensor cpu = run_op(op, {}, spec, &attr, Device::cpu()).front();
    const Tensor gpu = run_op(op, {}, spec, &attr, kGpu).front().to(Device::cpu());
    INGOT_REQUIRE_CLOSE(gpu, cpu, 0.0, 0.0);
  }
}

}  // namespace
}  // namespace ingot
