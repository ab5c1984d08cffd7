// Uses an installed Ingot from outside its tree: adds two tensors, checks the sum and prints it
// (with fmt, which comes through Ingot::ingot).
#include <fmt/format.h>
#include <ingot/ops/elementwise.h>
#include <ingot/tensor/tensor.h>

#include <vector>

int main() {
  const ingot::Tensor a = ingot::Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const ingot::Tensor b = ingot::Tensor::from_vector<float>({10, 20, 30, 40, 50, 60}, {2, 3});
  const ingot::Tensor sum = ingot::add(a, b);
  const std::vector<float> want = {11, 22, 33, 44, 55, 66};
  if (sum.shape() != ingot::Shape{2, 3} || sum.to_vector<float>() != want) {
    fmt::print(stderr, "ingot_consumer: wrong sum {}\n", sum.str());
    return 1;
  }
  fmt::print("ingot_consumer: {} + {} = {}\n", a.str(), b.str(), sum.str());
  return 0;
}
