// The loss registry: every built-in loss from train.loss, with torch's option names; errors name
// the file, line and valid choices; extension types register like built-ins.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "ingot/nn/loss_registry.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;

namespace {

Tensor logits() { return test::random_tensor({4, 3}, DType::F32, 21); }
Tensor labels() { return Tensor::from_vector<int64_t>({0, 2, 1, 2}, Shape{4}); }
nn::Loss from_yaml(const std::string& text) { return nn::make_loss(YAML::Load(text), "loss.yaml"); }

}  // namespace

TEST_CASE("loss registry: every built-in loss is listed", "[loss][registry]") {
  const std::vector<std::string> types = nn::loss_registry().types();
  for (const char* t : {"cross_entropy", "nll", "mse", "l1", "bce_with_logits", "kl_div"})
    CHECK(std::find(types.begin(), types.end(), t) != types.end());
}

TEST_CASE("loss registry: configured losses equal the functions with the same options", "[loss][registry]") {
  const Tensor x = logits(), y = labels();
  nn::CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.2;
  INGOT_REQUIRE_CLOSE(from_yaml("{type: cross_entropy, label_smoothing: 0.2}")(x, y), nn::cross_entropy(x, y, smooth),
                      0.0, 0.0);
  INGOT_REQUIRE_CLOSE(nn::make_loss(YAML::Node(), "f")(x, y), nn::cross_entropy(x, y), 0.0, 0.0);  // the default
  INGOT_REQUIRE_CLOSE(from_yaml("nll")(log_softmax(x, 1), y), nn::nll_loss(log_softmax(x, 1), y), 0.0, 0.0);
  const Tensor hot = nn::one_hot(y, 3, DType::F32);
  CHECK(hot.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1});
  INGOT_REQUIRE_CLOSE(from_yaml("{type: mse, one_hot: true}")(x, y), nn::mse_loss(x, hot), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(from_yaml("{type: l1, reduction: sum}")(x, hot), nn::l1_loss(x, hot, nn::Reduction::Sum), 0.0,
                      0.0);
  INGOT_REQUIRE_CLOSE(from_yaml("{type: bce_with_logits, one_hot: true}")(x, y),
                      nn::binary_cross_entropy_with_logits(x, hot), 0.0, 0.0);
  const Tensor p = softmax(test::random_tensor({4, 3}, DType::F32, 22), 1);
  INGOT_REQUIRE_CLOSE(from_yaml("kl_div")(log_softmax(x, 1), p), nn::kl_div(log_softmax(x, 1), p), 0.0, 0.0);
  const nn::Loss kl = from_yaml("{type: kl_div}");
  CHECK(kl.reduction == nn::Reduction::BatchMean);
  CHECK(kl.resolved["reduction"].as<std::string>() == "batchmean");
}

TEST_CASE("loss registry: evaluation sums where training averages", "[loss][registry]") {
  const nn::Loss ce = from_yaml("cross_entropy");
  const double mean = ce(logits(), labels()).item();
  const double sum = ce.fn(logits(), labels(), nn::Reduction::Sum).item();
  CHECK(sum == Approx(4 * mean).epsilon(1e-6));
}

TEST_CASE("loss registry: errors name the line, the key and the valid choices", "[loss][registry][errors]") {
  REQUIRE_THROWS_WITH(from_yaml("{type: cross_entropi}"),
                      Catch::Contains("loss.yaml:1: unknown loss type 'cross_entropi' (did you mean 'cross_entropy'?)") &&
                          Catch::Contains("known: bce_with_logits, cross_entropy"));
  REQUIRE_THROWS_WITH(from_yaml("{type: mse, label_smoothing: 0.1}"),
                      Catch::Contains("'train.loss.label_smoothing' does not apply to type 'mse' (it is cross_entropy's)"));
  REQUIRE_THROWS_WITH(from_yaml("{type: mse, one_hott: true}"), Catch::Contains("unknown key 'one_hott'"));
  REQUIRE_THROWS_WITH(from_yaml("{type: cross_entropy, reduction: batchmean}"), Catch::Contains("reduction"));
  REQUIRE_THROWS_WITH(from_yaml("[mse]"), Catch::Contains("expected a map with 'type:'"));
}

TEST_CASE("loss registry: a new type registers like a built-in, and names are unique", "[loss][registry]") {
  nn::LossRegistry& r = nn::loss_registry();
  config::Schema s;
  s.number("scale", 0.0);
  r.add({"scaled_l1", s,
         [](const YAML::Node& node, const std::string&) {
           const double k = node["scale"] ? node["scale"].as<double>() : 1.0;
           nn::Loss l{"scaled_l1"};
           l.fn = [k](const Tensor& a, const Tensor& b, nn::Reduction red) { return mul(nn::l1_loss(a, b, red), k); };
           return l;
         },
         "test loss", "test_extension"});
  const Tensor a = logits(), b = zeros(Shape{4, 3});
  INGOT_REQUIRE_CLOSE(from_yaml("{type: scaled_l1, scale: 3}")(a, b), mul(nn::l1_loss(a, b), 3.0), 0.0, 0.0);
  REQUIRE_THROWS_WITH(r.add({"mse", config::Schema(), nullptr, "", "test_extension"}),
                      Catch::Contains("loss type 'mse' from test_extension is already registered by builtin"));
}
