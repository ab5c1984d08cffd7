// Random tensors: each call passes the generator's (seed, offset) to the op and advances the
// offset by ceil(numel / 4), so a draw depends only on (seed, offset, element index).
#include "ingot/ops/random.h"

#include "ingot/plugin/philox.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"

namespace ingot {

namespace {

Tensor draw(OpKind op, const Shape& shape, double a, double b, DType dtype, Generator* gen, Device device) {
  for (int64_t d : shape) INGOT_CHECK_SHAPE(d >= 0, "{}: negative dim in shape {}", op_info(op).name, shape.str());
  if (op != INGOT_OP_BERNOULLI) {
    INGOT_CHECK_AS(is_floating(dtype), DTypeError, "{}: dtype {} is not floating", op_info(op).name, dtype_name(dtype));
  }
  Generator& g = gen != nullptr ? *gen : default_generator();
  const Generator::State s = g.next(shape.numel());
  auto attr = make_attr<ingot_attr_rng>();
  attr.seed = s.seed;
  attr.offset = s.offset;
  attr.a = a;
  attr.b = b;
  return run_op(op, {}, {OutputSpec{shape, dtype}}, &attr, device).front();
}

}  // namespace

namespace {
thread_local GeneratorObserver* t_observer = nullptr;
}  // namespace

GeneratorObserver* set_generator_observer(GeneratorObserver* observer) {
  GeneratorObserver* prev = t_observer;
  t_observer = observer;
  return prev;
}

Generator::State Generator::next(int64_t n) {
  if (t_observer != nullptr) t_observer->before_draw(*this);
  const State used = state_;
  state_.offset += sdk::philox_advance(static_cast<uint64_t>(n));
  return used;
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

Tensor uniform(const Shape& shape, double low, double high, DType dtype, Generator* gen, Device device) {
  INGOT_CHECK(low <= high, "uniform: low {} must not exceed high {}", low, high);
  return draw(INGOT_OP_UNIFORM, shape, low, high, dtype, gen, device);
}

Tensor bernoulli(const Shape& shape, double p, DType dtype, Generator* gen, Device device) {
  INGOT_CHECK(p >= 0.0 && p <= 1.0, "bernoulli: p = {} is not in [0, 1]", p);
  return draw(INGOT_OP_BERNOULLI, shape, p, 0.0, dtype, gen, device);
}

Tensor normal(const Shape& shape, double mean, double std, DType dtype, Generator* gen, Device device) {
  INGOT_CHECK(std >= 0.0, "normal: std {} is negative", std);
  return draw(INGOT_OP_NORMAL, shape, mean, std, dtype, gen, device);
}

Tensor rand(const Shape& shape, DType dtype, Generator* gen, Device device) {
  return uniform(shape, 0.0, 1.0, dtype, gen, device);
}

Tensor randn(const Shape& shape, DType dtype, Generator* gen, Device device) {
  return normal(shape, 0.0, 1.0, dtype, gen, device);
}

}  // namespace ingot
