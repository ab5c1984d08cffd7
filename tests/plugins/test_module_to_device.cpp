// Module::to(device) and Optimizer::to(device) on the fake two-device plugin: parameters, buffers,
// gradients and optimizer state move in place (the same handles), and training continues on the
// device exactly as it would have on the CPU.
#include <catch2/catch.hpp>

#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "ingot/optim/sgd.h"
#include "ingot/runtime/plugin_loader.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kDev1{DeviceKind::CUDA, 1};

/// A small MLP and SGD with momentum (its state appears with the first step).
struct Setup {
  std::shared_ptr<nn::Sequential> model;
  std::unique_ptr<optim::SGD> opt;
};

Setup make(uint64_t seed) {
  Generator g(seed);
  Setup s;
  s.model = std::make_shared<nn::Sequential>(
      std::initializer_list<nn::ModulePtr>{std::make_shared<nn::Linear>(6, 4, true, &g), std::make_shared<nn::ReLU>(),
                                           std::make_shared<nn::Linear>(4, 3, true, &g)});
  optim::SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  s.opt = std::make_unique<optim::SGD>(s.model->parameters(), o);
  return s;
}

void step(Setup& s, const Tensor& x) {
  sum(mul((*s.model)(x), (*s.model)(x))).backward();
  s.opt->step();
  s.opt->zero_grad();
}

}  // namespace

TEST_CASE("Module::to(device) and Optimizer::to(device) move everything in place", "[plugins][device][nn]") {
  PluginLoader::instance().load_folder(INGOT_DEVICE_FIXTURE_DIR);
  const Tensor x = test::random_tensor({5, 6}, DType::F32, 3);
  Setup cpu = make(9), dev = make(9);
  step(cpu, x);
  step(dev, x);  // momentum buffers now exist on the CPU

  const Tensor w = dev.model->parameters().front();
  const TensorImpl* before = &w.impl();
  dev.model->to(kDev1);
  dev.opt->to(kDev1);
  CHECK(&w.impl() == before);  // the same handle, now on the device
  CHECK(w.device() == kDev1);
  CHECK(dev.model->device() == kDev1);
  for (const Tensor& p : dev.model->parameters()) CHECK(p.device() == kDev1);
  CHECK(dev.opt->state(0, 0).tensors.at("momentum_buffer").device() == kDev1);

  for (int i = 0; i < 2; ++i) {
    step(cpu, x);
    step(dev, x.to(kDev1));
  }
  const auto a = cpu.model->parameters(), b = dev.model->parameters();
  for (size_t i = 0; i < a.size(); ++i) INGOT_REQUIRE_CLOSE(b[i].to(Device::cpu()), a[i], 1e-6, 1e-6);

  dev.model->to(Device::cpu());
  CHECK(w.device().is_cpu());
}

}  // namespace ingot
