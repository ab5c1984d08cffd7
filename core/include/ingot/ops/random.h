// Random tensors from counter-based Philox streams: a Generator is a (seed, offset) pair; each
// draw of n values uses the current offset and advances it by ceil(n / 4) (docs/architecture.md: random numbers).
#pragma once

#include <cstdint>

#include "ingot/tensor/tensor.h"

namespace ingot {

/// A random stream (seed, offset); the state is two integers, saved in checkpoints.
class Generator {
 public:
  struct State {
    uint64_t seed = 0;
    uint64_t offset = 0;
    friend bool operator==(const State&, const State&) = default;
  };

  explicit Generator(uint64_t seed = 0) : state_{seed, 0} {}
  /// Restarts the stream: seed = `seed`, offset = 0 (torch.manual_seed).
  void manual_seed(uint64_t seed) { state_ = {seed, 0}; }
  uint64_t seed() const { return state_.seed; }
  uint64_t offset() const { return state_.offset; }
  State state() const { return state_; }
  void set_state(const State& state) { state_ = state; }
  /// Returns the state a draw of n values uses, and advances the offset past it.
  State next(int64_t n);

 private:
  State state_;
};

/// The process's default generator (seed 0 until manual_seed), used when `gen` is null.
Generator& default_generator();

/// Sees every draw of its thread just before the generator's state is used: gradient
/// checkpointing records the state a segment's draws started from, to replay them when it
/// recomputes the segment.
class GeneratorObserver {
 public:
  virtual ~GeneratorObserver() = default;
  virtual void before_draw(Generator& gen) = 0;
};
/// Installs `observer` for this thread (null: none); returns the one it replaces.
GeneratorObserver* set_generator_observer(GeneratorObserver* observer);

/// Uniform values in [low, high).
Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0, DType dtype = DType::F32,
               Generator* gen = nullptr, Device device = Device::cpu());
/// 1 with probability p, else 0, in `dtype` (any dtype, bool included).
Tensor bernoulli(const Shape& shape, double p, DType dtype = DType::F32, Generator* gen = nullptr,
                 Device device = Device::cpu());
/// Normal values with mean and standard deviation std (Box-Muller on Philox pairs).
Tensor normal(const Shape& shape, double mean = 0.0, double std = 1.0, DType dtype = DType::F32,
              Generator* gen = nullptr, Device device = Device::cpu());
/// uniform(shape, 0, 1).
Tensor rand(const Shape& shape, DType dtype = DType::F32, Generator* gen = nullptr, Device device = Device::cpu());
/// normal(shape, 0, 1).
Tensor randn(const Shape& shape, DType dtype = DType::F32, Generator* gen = nullptr, Device device = Device::cpu());

}  // namespace ingot
