// Dropout on the DROPOUT op (ingot::dropout): a Philox mask keyed by the generator's state.
#include "ingot/nn/dropout.h"

#include "ingot/ops/dropout.h"

namespace ingot::nn {

Dropout::Dropout(double p, Generator* gen) : Module("Dropout"), p_(p), gen_(gen) {
  INGOT_CHECK(p >= 0.0 && p <= 1.0, "Dropout: p = {} must be in [0, 1]", p);
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p_, is_training(), gen_); }

std::string Dropout::extra_repr() const { return fmt::format("p={}, inplace=False", p_); }

}  // namespace ingot::nn
