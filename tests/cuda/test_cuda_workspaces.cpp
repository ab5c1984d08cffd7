// The cuda backend's workspaces through core: cuBLASLt's and cuDNN's workspaces do not count as
// allocated tensor memory, and a convolution run with almost no free device memory still succeeds
// (cuDNN's next-ranked algorithm whose workspace fits). Skipped without a GPU.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <iostream>
#include <vector>

#include "cuda_plugin_path.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/device_memory.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};

using test::gpu_ready;

// Takes the device's free memory with raw cudaMalloc (the plugin's allocator does not see it)
// until at most `leave` bytes are left; gives it back when destroyed.
class MemoryFiller {
 public:
  explicit MemoryFiller(size_t leave) {
    constexpr size_t kChunk = size_t(1) << 20, kMargin = size_t(64) << 20;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return;
    if (free_b > leave + kMargin) grab(free_b - leave - kMargin);
    while (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b > leave + kChunk && grab(kChunk)) {
    }
    (void)cudaGetLastError();
  }
  ~MemoryFiller() {
    for (void* p : blocks_) (void)cudaFree(p);
  }
  MemoryFiller(const MemoryFiller&) = delete;
  MemoryFiller& operator=(const MemoryFiller&) = delete;

 private:
  bool grab(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) return false;
    blocks_.push_back(p);
    return true;
  }
  std::vector<void*> blocks_;
};

TEST_CASE("cuda workspaces: cuBLASLt's and cuDNN's workspaces are not allocated tensor memory", "[cuda][memory]") {
  if (!gpu_ready()) return;
  const Tensor a = test::random_tensor({64, 64}, DType::F32, 1).to(kGpu);
  const Tensor b = test::random_tensor({64, 64}, DType::F32, 2).to(kGpu);
  const Tensor x = test::random_tensor({2, 8, 16, 16}, DType::F32, 3).to(kGpu);
  const Tensor w = test::random_tensor({8, 8, 3, 3}, DType::F32, 4).to(kGpu);
  Conv2dParams p;
  p.padding = {1, 1};
  const MemoryStats before = memory_stats(kGpu);
  const Tensor c = matmul(a, b);                               // 16 KiB out, 32 MiB cuBLASLt workspace
  const Tensor y = conv2d(x, w, Tensor(), p);                  // 16 KiB out, cuDNN's workspace
  const Tensor dx = conv2d_backward_data(y, w, x.shape(), p);  // 16 KiB out
  synchronize(kGpu);
  const MemoryStats after = memory_stats(kGpu);
  CHECK(after.allocated - before.allocated == 3 * 16384);
  CHECK(after.reserved - before.reserved >= (int64_t(32) << 20));  // the workspace is reserved, though
}

TEST_CASE("cuda workspaces: a convolution with almost no free device memory takes an algorithm that fits",
          "[cuda][conv]") {
  if (!gpu_ready()) return;
  const Tensor x = test::random_tensor({8, 64, 56, 56}, DType::F32, 5);
  const Tensor w = test::random_tensor({64, 64, 3, 3}, DType::F32, 6);
  const Tensor bias = test::random_tensor({64}, DType::F32, 7);
  Conv2dParams p;
  p.padding = {1, 1};
  const Tensor expected = conv2d(x, w, bias, p, Activation::Relu);
  const Tensor xg = x.to(kGpu), wg = w.to(kGpu), bg = bias.to(kGpu);
  const Backend& be = device_backend(kGpu);
  Tensor roomy = conv2d(xg, wg, bg, p, Activation::Relu);  // ranks the algorithms, creates cuDNN's handle
  const std::string roomy_algo = be.impl_name(INGOT_OP_CONV2D);
  INGOT_REQUIRE_CLOSE(roomy.to(Device::cpu()), expected, 2e-2, 1e-2);  // TF32 allowed for convolutions
  roomy = Tensor();  // its block is cached: the next output needs no new memory
  synchronize(kGpu);
  Tensor tight;
  {
    MemoryFiller fill(size_t(2) << 20);
    tight = conv2d(xg, wg, bg, p, Activation::Relu);
    synchronize(kGpu);
  }
  std::cout << "conv2d algorithm with free memory: " << roomy_algo
            << "; with 2 MiB free: " << be.impl_name(INGOT_OP_CONV2D) << "\n";
  INGOT_REQUIRE_CLOSE(tight.to(Device::cpu()), expected, 2e-2, 1e-2);
}

}  // namespace
}  // namespace ingot
