// Dropout through the DROPOUT op: the generator's (seed, offset) goes into the op's rng attribute
// with a = p; autograd records the op and its rule scales the gradient by the saved mask.
#include "ingot/ops/dropout.h"

#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"

namespace ingot {

DropoutResult dropout_with_mask(const Tensor& x, double p, Generator* gen) {
  INGOT_CHECK(x.defined(), "dropout: input tensor is undefined");
  INGOT_CHECK(p >= 0.0 && p <= 1.0, "dropout: p = {} is not in [0, 1]", p);
  INGOT_CHECK_AS(is_floating(x.dtype()), DTypeError, "dropout: input is {}, expected a floating dtype",
                 dtype_name(x.dtype()));
  Generator& g = gen != nullptr ? *gen : default_generator();
  const Generator::State s = g.next(x.numel());
  auto attr = make_attr<ingot_attr_rng>();
  attr.seed = s.seed;
  attr.offset = s.offset;
  attr.a = p;
  std::vector<Tensor> out =
      run_op(INGOT_OP_DROPOUT, {x}, {OutputSpec{x.shape(), x.dtype()}, OutputSpec{x.shape(), DType::Bool}}, &attr);
  return {out[0], out[1]};
}

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  INGOT_CHECK(p >= 0.0 && p <= 1.0, "dropout: p = {} is not in [0, 1]", p);
  // p = 0 keeps every element and draws nothing (torch's dropout returns its input there too).
  if (!training || p == 0.0) return x;
  return dropout_with_mask(x, p, gen).y;
}

}  // namespace ingot
