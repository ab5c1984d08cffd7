// The memory estimate before training: exact weight, gradient and optimizer-state bytes, the
// activation walk over a Sequential, the advice that names what dominates, the refusal, and the
// CPU's budget and core count as this process sees them.
#include <catch2/catch.hpp>

#include <thread>

#include "ingot/base/error.h"
#include "ingot/nn/presets.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/runtime/threads.h"
#include "ingot/train/memory_estimate.h"

using namespace ingot;
using Catch::Matchers::Contains;

TEST_CASE("memory estimate: weights, gradients, optimizer state and activations of an MLP", "[train][memory]") {
  Generator gen(1);
  const auto mlp = nn::make_mlp({{64, 32, 4}, "relu", 0.0}, &gen);  // Flatten, Linear, ReLU, Linear
  const int64_t params = 64 * 32 + 32 + 32 * 4 + 4;
  const train::MemoryEstimate e =
      train::estimate_training_memory(*mlp, Shape{1, 8, 8}, 16, /*state=*/2, /*in flight=*/3, 1000, Device::cpu());
  CHECK(e.weights == params * 4);
  CHECK(e.gradients == params * 4);
  CHECK(e.optimizer_state == 2 * params * 4);
  // Input 16x64, Flatten 16x64, Linear 16x32, ReLU 16x32, Linear 16x4, plus twice the largest.
  CHECK(e.activations == (16 * 64 * 2 + 16 * 32 * 2 + 16 * 4 + 2 * 16 * 64) * 4);
  CHECK(e.data == 3 * 16 * 64 * 4);
  CHECK(e.total() == e.weights + e.gradients + e.optimizer_state + e.activations + e.data + 1000);
  CHECK_THAT(e.str(), Contains("at batch 16, datasets 1000 B"));
  // On an accelerator the datasets stay in host memory.
  const auto d = train::estimate_training_memory(*mlp, Shape{1, 8, 8}, 16, 2, 3, 1000, Device{DeviceKind::CUDA, 0});
  CHECK(d.total() == e.total() - 1000);
  CHECK_THAT(d.str(), !Contains("datasets"));
}

TEST_CASE("memory estimate: a residual block counts its inner layers", "[train][memory]") {
  Generator gen(1);
  const auto resnet = nn::make_resnet({8, 16, 1, 10}, &gen);  // stem, one block per stage
  const auto e = train::estimate_training_memory(*resnet, Shape{1, 28, 28}, 32, 1, 1, 0, Device::cpu());
  // The stem (conv, BN, ReLU) and the first stage's block (two convs, two BNs, two ReLUs, the add)
  // all at 32 x 16 x 28 x 28: ten such tensors at the least.
  CHECK(e.activations > int64_t{10} * 32 * 16 * 28 * 28 * 4);
}

TEST_CASE("memory estimate: the advice names what dominates, a run that does not fit is refused", "[train][memory]") {
  train::MemoryEstimate big_batch;
  big_batch.batch = 1000;
  big_batch.weights = big_batch.gradients = 1 << 20;
  big_batch.activations = int64_t{8} << 30;
  CHECK_THAT(big_batch.advice(), Contains("activations dominate") && Contains("lower data.batch_size"));
  train::MemoryEstimate big_model = big_batch;
  big_model.activations = 1 << 20;
  big_model.weights = big_model.gradients = int64_t{4} << 30;
  CHECK_THAT(big_model.advice(), Contains("the model itself dominates"));

  MemoryBudget budget{int64_t{16} << 30, int64_t{2} << 30, "cgroup /sys/fs/cgroup/memory.max"};
  try {
    train::check_memory_fits(big_batch, budget, Device::cpu());
    FAIL("no refusal");
  } catch (const InputError& err) {
    CHECK_THAT(err.what(), Contains("not enough memory on cpu: training needs about 8.0 GiB") &&
                               Contains("but 2.0 GiB is available (cgroup /sys/fs/cgroup/memory.max)") &&
                               Contains("lower data.batch_size") && Contains("train.memory_check: false"));
  }
  budget.available = int64_t{9} << 30;
  CHECK_NOTHROW(train::check_memory_fits(big_batch, budget, Device::cpu()));
  CHECK_NOTHROW(train::check_memory_fits(big_batch, MemoryBudget{}, Device::cpu()));  // unknown: no check
}

TEST_CASE("memory budget and usable cores of this process", "[train][memory]") {
  const MemoryBudget b = memory_budget(Device::cpu());
  CHECK(b.total > 0);
  CHECK(b.available > 0);
  CHECK(b.available <= b.total);
  CHECK_FALSE(b.bound_by.empty());
  const int cores = usable_cores();
  CHECK(cores >= 1);
  CHECK(cores <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST_CASE("format_memory_bytes", "[train][memory]") {
  CHECK(format_memory_bytes(512) == "512 B");
  CHECK(format_memory_bytes(1536) == "1.5 KiB");
  CHECK(format_memory_bytes(int64_t{3} << 20) == "3.0 MiB");
  CHECK(format_memory_bytes(int64_t{5} << 30) == "5.0 GiB");
}

TEST_CASE("memory estimate: mixed precision and checkpointing shrink the activations", "[train][memory]") {
  Generator gen(1);
  const auto mlp = nn::make_mlp({{64, 32, 4}, "relu", 0.0}, &gen);
  const auto plain = train::estimate_training_memory(*mlp, Shape{1, 8, 8}, 16, 2, 3, 0, Device::cpu());
  const auto amp = train::estimate_training_memory(*mlp, Shape{1, 8, 8}, 16, 2, 3, 0, Device::cpu(),
                                                   {.element_bytes = 2});
  CHECK(amp.activations * 2 == plain.activations);
  CHECK(amp.weights == plain.weights);  // f32 master weights, gradients and optimizer state
  CHECK(amp.optimizer_state == plain.optimizer_state);
  const auto resnet = nn::make_resnet({20, 16, 1, 10}, &gen);  // ResNet-20: 9 blocks
  const auto full = train::estimate_training_memory(*resnet, Shape{1, 28, 28}, 32, 1, 1, 0, Device::cpu());
  // checkpointing: the plan's measured peak per sample replaces the walk's activations
  const auto ck = train::estimate_training_memory(*resnet, Shape{1, 28, 28}, 32, 1, 1, 0, Device::cpu(),
                                                  {.checkpoint_peak_per_sample = 1000});
  CHECK(ck.activations == 32 * 1000);
  CHECK(ck.weights == full.weights);
  const auto ck_amp = train::estimate_training_memory(*resnet, Shape{1, 28, 28}, 32, 1, 1, 0, Device::cpu(),
                                                      {.element_bytes = 2, .checkpoint_peak_per_sample = 1000});
  CHECK(ck_amp.activations == 32 * 1000 / 2);
}
