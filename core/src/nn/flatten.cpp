// Flatten on Tensor::flatten (a recorded view, so gradients reshape back).
#include "ingot/nn/flatten.h"

namespace ingot::nn {

Flatten::Flatten(int64_t start_dim, int64_t end_dim) : Module("Flatten"), start_(start_dim), end_(end_dim) {}

Tensor Flatten::forward(const Tensor& x) { return x.flatten(start_, end_); }

Shape Flatten::output_shape(const Shape& input) const {
  if (input.empty()) return Shape{1};
  const int s = wrap_axis(start_, input.size(), "Flatten start_dim");
  const int e = wrap_axis(end_, input.size(), "Flatten end_dim");
  INGOT_CHECK_SHAPE(s <= e, "Flatten: start_dim {} comes after end_dim {} for input {}", start_, end_, input.str());
  Shape out;
  for (int i = 0; i < s; ++i) out.push_back(input[i]);
  int64_t n = 1;
  for (int i = s; i <= e; ++i) n *= input[i];
  out.push_back(n);
  for (int i = e + 1; i < input.size(); ++i) out.push_back(input[i]);
  return out;
}

std::string Flatten::extra_repr() const { return fmt::format("start_dim={}, end_dim={}", start_, end_); }

}  // namespace ingot::nn
