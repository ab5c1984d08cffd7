// Parity of every loss and option combination with torch 1.13: values and input gradients
// recorded by tests/golden/make_losses.py (loss_cases.json + loss_tensors.safetensors).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

#include "ingot/io/safetensors.h"
#include "ingot/nn/loss.h"
#include "test_support.h"
#include "train_math_util.h"

namespace ingot {
namespace {

// f32 tolerances, |a - b| <= atol + rtol |b|. Values: 1e-5 relative (the task's bar); atol 1e-6
// covers losses that are ~0 (a well-classified sample). Gradients: entries are differences of
// probabilities, so 1e-6 absolute on top of 1e-5 relative.
constexpr double kValueRtol = 1e-5, kValueAtol = 1e-6;
constexpr double kGradRtol = 1e-5, kGradAtol = 1e-6;

struct Golden {
  nlohmann::json cases;
  std::map<std::string, Tensor> tensors;

  Tensor get(const std::string& name, const char* key) const {
    auto it = tensors.find(name + "." + key);
    return it == tensors.end() ? Tensor() : it->second;
  }
};

const Golden& golden() {
  static const Golden g = [] {
    Golden out;
    std::ifstream in(test::golden_path("loss_cases.json"));
    REQUIRE(in.good());
    out.cases = nlohmann::json::parse(in)["cases"];
    out.tensors = io::load_safetensors(test::golden_path("loss_tensors.safetensors")).tensors;
    return out;
  }();
  return g;
}

/// Runs the case's loss on `input` (which may require grad).
Tensor run_case(const nlohmann::json& c, const Golden& g, const Tensor& input) {
  const std::string name = c["name"], fn = c["fn"];
  const nlohmann::json& o = c["options"];
  const Tensor target = g.get(name, "target");
  const auto reduction = [&](const char* fallback) {
    return nn::parse_reduction(o.value("reduction", std::string(fallback)));
  };
  if (fn == "cross_entropy" || fn == "nll_loss") {
    nn::CrossEntropyOptions opt;
    opt.reduction = reduction("mean");
    opt.label_smoothing = o.value("label_smoothing", 0.0);
    opt.ignore_index = o.value("ignore_index", int64_t{-100});
    opt.weight = g.get(name, "weight");
    return fn == "nll_loss" ? nn::nll_loss(input, target, opt) : nn::cross_entropy(input, target, opt);
  }
  if (fn == "mse_loss") return nn::mse_loss(input, target, reduction("mean"));
  if (fn == "l1_loss") return nn::l1_loss(input, target, reduction("mean"));
  if (fn == "binary_cross_entropy_with_logits") {
    nn::BceWithLogitsOptions opt;
    opt.reduction = reduction("mean");
    opt.weight = g.get(name, "weight");
    opt.pos_weight = g.get(name, "pos_weight");
    return nn::binary_cross_entropy_with_logits(input, target, opt);
  }
  if (fn == "kl_div") {
    nn::KlDivOptions opt;
    opt.reduction = reduction("batchmean");
    opt.log_target = o.value("log_target", false);
    return nn::kl_div(input, target, opt);
  }
  FAIL("unknown loss in loss_cases.json: " << fn);
  return Tensor();
}

TEST_CASE("loss golden: values equal torch 1.13's", "[loss][golden]") {
  const Golden& g = golden();
  REQUIRE(g.cases.size() >= 50);
  for (const auto& c : g.cases) {
    const std::string name = c["name"];
    INFO("case " << name << " (" << c["fn"].get<std::string>() << ", " << c["options"].dump() << ")");
    const Tensor loss = run_case(c, g, g.get(name, "input"));
    INGOT_REQUIRE_CLOSE(loss, g.get(name, "loss"), kValueAtol, kValueRtol);
  }
}

TEST_CASE("loss golden: values in f64 equal torch's f32 values", "[loss][golden]") {
  // The same losses on f64 inputs: checks the functions are dtype-generic (weights are cast).
  const Golden& g = golden();
  for (const auto& c : g.cases) {
    const std::string name = c["name"];
    INFO("case " << name);
    const Tensor loss = run_case(c, g, g.get(name, "input").to(DType::F64));
    REQUIRE(loss.dtype() == DType::F64);
    INGOT_REQUIRE_CLOSE(loss, g.get(name, "loss"), kValueAtol, kValueRtol);
  }
}

TEST_CASE("loss golden: input gradients equal torch autograd's", "[loss][golden][autograd]") {
  const Golden& g = golden();
  for (const auto& c : g.cases) {
    const std::string name = c["name"];
    INFO("case " << name << " (" << c["fn"].get<std::string>() << ", " << c["options"].dump() << ")");
    const Tensor input = g.get(name, "input").clone();
    input.set_requires_grad(true);
    const Tensor loss = run_case(c, g, input);
    loss.backward(g.get(name, "grad_output"));
    REQUIRE(input.grad().defined());
    INGOT_REQUIRE_CLOSE(input.grad(), g.get(name, "grad_input"), kGradAtol, kGradRtol);
  }
}

}  // namespace
}  // namespace ingot
