// The distillation loss against torch 1.13 (tests/golden/make_distill.py: value and gradient with
// respect to the student's logits for several T and alpha), as the kd_loss function and as the
// distill stage wires it (the scaled hard-label loss plus the callback's term), and alpha = 0.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "distill_callback.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/loss.h"
#include "ingot/ops/ops.h"
#include "ingot/optim/sgd.h"
#include "kd_loss.h"
#include "test_support.h"

namespace {

using ingot::Tensor;
namespace distill = ingot::distill;

struct GoldenCase {
  std::string name;
  double temperature = 0.0, alpha = 0.0;
  Tensor student, teacher, target, kd, ce, loss, grad_kd, grad_loss;
};

std::vector<GoldenCase> golden_cases() {
  const ingot::io::SafetensorsFile f =
      ingot::io::load_safetensors(std::string(INGOT_GOLDEN_DIR) + "/distill.safetensors");
  std::vector<GoldenCase> out;
  std::stringstream names(f.metadata.at("cases"));
  for (std::string name; std::getline(names, name, ',');) {
    const auto t = [&](const char* what) { return f.tensors.at(name + "." + what); };
    out.push_back({name, std::stod(f.metadata.at(name + ".temperature")), std::stod(f.metadata.at(name + ".alpha")),
                   t("student"), t("teacher"), t("target"), t("kd"), t("ce"), t("loss"), t("grad_kd"), t("grad_loss")});
  }
  REQUIRE(out.size() >= 5);
  return out;
}

/// A module that returns its input: the "teacher" whose logits are the batch's inputs.
class Passthrough final : public ingot::nn::Module {
 public:
  Passthrough() : Module("Passthrough") {}
  Tensor forward(const Tensor& x) override {
    ++calls;
    return x;
  }
  int calls = 0;
};

/// What the trainer hands the callback.
struct LoopState {
  std::shared_ptr<ingot::nn::Module> model = std::make_shared<Passthrough>();
  Tensor weight = [] {
    Tensor t = ingot::test::random_tensor({1}, ingot::DType::F32, 0);
    t.set_requires_grad(true);
    return t;
  }();
  ingot::optim::SGD optimizer{std::vector<Tensor>{weight}};
  ingot::train::TrainPosition position;
  ingot::train::TrainState state{*model, optimizer, position};
};

}  // namespace

TEST_CASE("kd_loss matches torch's T^2 * kl_div(batchmean) in value and gradient for several T") {
  for (const GoldenCase& c : golden_cases()) {
    INFO(c.name << " T=" << c.temperature);
    const Tensor s = c.student.clone();
    s.set_requires_grad(true);
    const Tensor kd = distill::kd_loss(s, c.teacher, c.temperature);
    INGOT_REQUIRE_CLOSE(kd.reshape({1}), c.kd, 1e-6, 1e-5);
    kd.backward();
    INGOT_REQUIRE_CLOSE(s.grad(), c.grad_kd, 1e-6, 1e-4);
  }
}

TEST_CASE("distillation_loss matches torch's alpha * kd + (1 - alpha) * cross_entropy and its gradient") {
  for (const GoldenCase& c : golden_cases()) {
    INFO(c.name << " T=" << c.temperature << " alpha=" << c.alpha);
    const Tensor s = c.student.clone();
    s.set_requires_grad(true);
    const Tensor loss = distill::distillation_loss(s, c.teacher, c.target, c.temperature, c.alpha);
    INGOT_REQUIRE_CLOSE(loss.reshape({1}), c.loss, 1e-6, 1e-5);
    loss.backward();
    INGOT_REQUIRE_CLOSE(s.grad(), c.grad_loss, 1e-6, 1e-4);
  }
}

TEST_CASE("the stage's wiring (scaled cross entropy plus the callback's term) matches torch and logs both terms") {
  for (const GoldenCase& c : golden_cases()) {
    INFO(c.name << " T=" << c.temperature << " alpha=" << c.alpha);
    auto teacher = std::make_shared<Passthrough>();
    auto tap = std::make_shared<distill::LossTap>();
    const ingot::nn::Loss ce = distill::scaled_loss(ingot::nn::make_loss(YAML::Node(), "test"), 1.0 - c.alpha, tap);
    distill::DistillCallback cb(teacher, {.temperature = c.temperature, .alpha = c.alpha, .log_every = 1}, tap,
                                nullptr);
    LoopState loop;
    const ingot::data::Batch batch{c.teacher, c.target};
    const Tensor s = c.student.clone();
    s.set_requires_grad(true);
    // As train_loop does: the configured loss, then each callback's extra term added.
    Tensor loss = ce(s, c.target);
    if (const Tensor extra = cb.extra_loss(loop.state, batch, s, loss); extra.defined()) loss = loss + extra;
    INGOT_REQUIRE_CLOSE(loss.reshape({1}), c.loss, 1e-6, 1e-5);
    loss.backward();
    INGOT_REQUIRE_CLOSE(s.grad(), c.grad_loss, 1e-6, 1e-4);
    const distill::DistillTerms terms = cb.totals();
    CHECK(terms.ce_loss == Approx(c.ce.item()).epsilon(1e-5));
    if (c.alpha == 0.0) {
      CHECK(std::isnan(terms.kd_loss));
      CHECK(teacher->calls == 0);
    } else {
      CHECK(terms.kd_loss == Approx(c.kd.item()).epsilon(1e-5));
      CHECK(teacher->calls == 1);
    }
  }
}

TEST_CASE("alpha = 0 is plain cross entropy, bit for bit, and never runs the teacher") {
  const GoldenCase c = golden_cases().front();
  const Tensor a = c.student.clone(), b = c.student.clone();
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  const Tensor plain = ingot::nn::cross_entropy(a, c.target);
  plain.backward();

  auto teacher = std::make_shared<Passthrough>();
  auto tap = std::make_shared<distill::LossTap>();
  const ingot::nn::Loss ce = distill::scaled_loss(ingot::nn::make_loss(YAML::Node(), "test"), 1.0, tap);
  distill::DistillCallback cb(teacher, {.temperature = 4.0, .alpha = 0.0, .log_every = 1}, tap, nullptr);
  LoopState loop;
  const ingot::data::Batch batch{c.teacher, c.target};
  const Tensor loss = ce(b, c.target);
  REQUIRE_FALSE(cb.extra_loss(loop.state, batch, b, loss).defined());
  loss.backward();
  CHECK(loss.item() == plain.item());
  CHECK(b.grad().to_vector<float>() == a.grad().to_vector<float>());
  CHECK(teacher->calls == 0);
  CHECK(cb.teacher_forwards() == 0);
  CHECK(distill::distillation_loss(c.student, c.teacher, c.target, 4.0, 0.0).item() == plain.item());
}

TEST_CASE("kd_loss is zero when the student equals the teacher and refuses mismatched logits") {
  const GoldenCase c = golden_cases().front();
  CHECK(std::abs(distill::kd_loss(c.teacher, c.teacher, 4.0).item()) < 1e-6);
  const Tensor fewer = ingot::test::random_tensor({8, 9}, ingot::DType::F32, 3);
  CHECK_THROWS_AS(distill::kd_loss(fewer, c.teacher, 4.0), ingot::ShapeError);
  CHECK_THROWS_AS(distill::kd_loss(c.student, c.teacher, 0.0), ingot::ConfigError);
}

TEST_CASE("kd_loss of a language model's [B, T, V] logits is the loss of its B * T rows") {
  const Tensor s = ingot::test::random_tensor({2, 3, 5}, ingot::DType::F32, 4, -2.0, 2.0);
  const Tensor t = ingot::test::random_tensor({2, 3, 5}, ingot::DType::F32, 5, -2.0, 2.0);
  const double rows = distill::kd_loss(s.reshape(ingot::Shape{6, 5}), t.reshape(ingot::Shape{6, 5}), 2.0).item();
  CHECK(distill::kd_loss(s, t, 2.0).item() == Approx(rows).epsilon(1e-6));
  CHECK_THROWS_AS(distill::kd_loss(s, t.reshape(ingot::Shape{6, 5}), 2.0), ingot::ShapeError);
}
