// The cuda backend's quantized ops against the reference at a small CNN's shapes (batch 256):
// QUANTIZE, DEQUANTIZE, QLINEAR's three output kinds and u8 max pooling repeat the reference's
// arithmetic, so the results are bit-identical. Skipped without a GPU.
#include <catch2/catch.hpp>

#include <cstring>

#include "cuda_plugin_path.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/registry.h"
#include "require_on_cuda.h"
#include "same_bits.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};
const Device kCpu = Device::cpu();

/// While alive, host ops run on the reference backend (another CPU plugin may round differently).
struct ReferenceOnHost {
  ReferenceOnHost() { BackendRegistry::instance().restrict_to({"cuda"}); }
  ~ReferenceOnHost() { BackendRegistry::instance().restrict_to({}); }
};

using test::require_same_bits;

std::vector<float> scales(int64_t n, float base) {
  std::vector<float> s;
  for (int64_t i = 0; i < n; ++i) s.push_back(base * (1.0f + 0.01f * static_cast<float>(i % 37)));
  return s;
}

TEST_CASE("cuda quantize and dequantize are bit-identical to the reference", "[cuda][quantize]") {
  if (!test::gpu_ready()) return;
  const ReferenceOnHost guard;
  const Tensor x = test::random_tensor({256, 16, 14, 14}, DType::F32, 1, -3.0, 5.0);
  const QParams per_tensor = QParams::per_tensor(4.0 / 255, 60, DType::U8);
  const QParams per_channel = QParams::per_channel_of(scales(16, 0.02f), std::vector<int32_t>(16, -3), 1, DType::I8);
  const Tensor xg = x.to(kGpu);
  const QParams tg = per_tensor.to(kGpu), cg = per_channel.to(kGpu);
  reset_op_counts();
  const Tensor q_gpu = quantize(xg, tg);
  const Tensor c_gpu = quantize(xg.transpose(2, 3), cg);  // strided x
  const Tensor d_gpu = dequantize(c_gpu, cg);
  test::require_all_on_cuda();
  require_same_bits(q_gpu, quantize(x, per_tensor));
  const Tensor c_cpu = quantize(x.transpose(2, 3), per_channel);
  require_same_bits(c_gpu, c_cpu);
  require_same_bits(d_gpu, dequantize(c_cpu, per_channel));
}

TEST_CASE("cuda qlinear: i32, f32 and requantized outputs are bit-identical to the reference", "[cuda][quantize]") {
  if (!test::gpu_ready()) return;
  const ReferenceOnHost guard;
  struct Shape2 {
    int64_t m, k, n;
  };
  // a CNN's classifier layers (784 -> 64 -> 10: N = 10 is padded to 12), a u8 and an i8 input
  for (const Shape2 s : {Shape2{256, 784, 64}, Shape2{256, 64, 10}, Shape2{7, 33, 5}}) {
    for (const DType xt : {DType::U8, DType::I8}) {
      INFO(s.m << " x " << s.k << " x " << s.n << " " << dtype_name(xt));
      const QParams xq = QParams::per_tensor(0.05, xt == DType::U8 ? 120 : -4, xt);
      const QParams wq = QParams::per_channel_of(scales(s.n, 0.01f), std::vector<int32_t>(s.n, 0), 0, DType::I8);
      const QParams yq = QParams::per_tensor(0.3, 0, DType::U8);
      const Tensor x = quantize(test::random_tensor({s.m, s.k}, DType::F32, 2, -6.0, 6.0), xq);
      const Tensor w = quantize(test::random_tensor({s.n, s.k}, DType::F32, 3, -1.2, 1.2), wq);
      const Tensor bias = test::random_tensor({s.n}, DType::F32, 4);
      const Tensor xg = x.to(kGpu), wg = w.to(kGpu), bg = bias.to(kGpu);
      const QParams xqg = xq.to(kGpu), wqg = wq.to(kGpu), yqg = yq.to(kGpu);
      reset_op_counts();
      const Tensor acc = quantized_linear(xg, xqg, wg, wqg, Tensor(), QOutput::I32);
      const Tensor f = quantized_linear(xg, xqg, wg, wqg, bg, QOutput::F32, Activation::Relu);
      const Tensor r = quantized_linear(xg, xqg, wg, wqg, bg, QOutput::Requantized, Activation::Relu, &yqg);
      test::require_all_on_cuda();
      require_same_bits(acc, quantized_linear(x, xq, w, wq, Tensor(), QOutput::I32));
      require_same_bits(f, quantized_linear(x, xq, w, wq, bias, QOutput::F32, Activation::Relu));
      require_same_bits(r, quantized_linear(x, xq, w, wq, bias, QOutput::Requantized, Activation::Relu, &yq));
    }
  }
}

TEST_CASE("cuda max pooling of u8 values equals the reference", "[cuda][quantize]") {
  if (!test::gpu_ready()) return;
  const ReferenceOnHost guard;
  const Tensor q = quantize(test::random_tensor({64, 16, 28, 28}, DType::F32, 5, -1.0, 4.0),
                            QParams::per_tensor(4.0 / 255, 0, DType::U8));
  Pool2dParams p;
  p.kernel = {2, 2};
  const Tensor qg = q.to(kGpu);
  reset_op_counts();
  const Tensor y = max_pool2d_values(qg, p);
  test::require_all_on_cuda();
  require_same_bits(y, max_pool2d_values(q, p));
}

}  // namespace
}  // namespace ingot
