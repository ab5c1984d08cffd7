// Pruning masks against torch.nn.utils.prune 1.13 (tests/golden/make_prune.py): l1, global and
// ln structured masks on the fixture's weights, and pruning twice (torch's PruningContainer), both
// on the mask functions and through a Pruner on real layers.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "ingot/base/grad_mode.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/sequential.h"
#include "masks.h"
#include "pruner.h"

namespace ingot::prune {
namespace {

const io::SafetensorsFile& golden() {
  static const io::SafetensorsFile f =
      io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "prune.safetensors");
  return f;
}

std::vector<float> values(const std::string& name) {
  const auto it = golden().tensors.find(name);
  INGOT_CHECK(it != golden().tensors.end(), "prune.safetensors: no tensor '{}'", name);
  return it->second.to_vector<float>();
}

Mask ones(size_t n) { return Mask(n, 1.0f); }

/// The case's mask with the given function applied to a fresh mask, compared exactly.
template <class Fn>
void check_case(const std::string& name, Fn&& fn) {
  const std::vector<float> w = values(name + ".weight");
  Mask m = ones(w.size());
  fn(w, m);
  const std::vector<float> want = values(name + ".mask");
  REQUIRE(count_pruned(m) == count_pruned(want));
  REQUIRE(m == want);
}

PruneConfig config(Method method, const std::string& where = "test") {
  PruneConfig c;
  c.method = method;
  c.where = where;
  return c;
}

void load(const Tensor& dst, const std::string& name) {
  const NoGradGuard no_grad;
  dst.copy_(Tensor::from_vector(values(name), dst.shape()));
}

TEST_CASE("l1_unstructured: a fraction and a count give torch's masks", "[prune][golden]") {
  check_case("l1_frac", [](const auto& w, Mask& m) { l1_unstructured(w, m, Amount::of_fraction(0.3), "conv"); });
  check_case("l1_count", [](const auto& w, Mask& m) { l1_unstructured(w, m, Amount::of_count(7), "conv"); });
}

TEST_CASE("ln_structured: n = 1 and 2 on Conv2d and Linear weights give torch's masks", "[prune][golden]") {
  for (const int64_t n : {1, 2}) {
    INFO("n = " << n);
    check_case(fmt::format("ln{}_conv", n),
               [n](const auto& w, Mask& m) { ln_structured(w, 8, m, Amount::of_fraction(0.5), n, "conv"); });
    check_case(fmt::format("ln{}_linear", n),
               [n](const auto& w, Mask& m) { ln_structured(w, 12, m, Amount::of_fraction(0.5), n, "linear"); });
  }
  // The 1- and 2-norm choices differ on this weight, so each n is really checked.
  REQUIRE(values("ln1_conv.mask") != values("ln2_conv.mask"));
}

TEST_CASE("ln_structured twice: the second prunes half of the filters left", "[prune][golden]") {
  check_case("twice_ln", [](const std::vector<float>& w, Mask& m) {
    ln_structured(w, 8, m, Amount::of_fraction(0.5), 2, "conv");
    std::vector<float> masked = w;
    for (size_t i = 0; i < w.size(); ++i) masked[i] *= m[i];
    ln_structured(masked, 8, m, Amount::of_fraction(0.5), 2, "conv");
  });
}

TEST_CASE("global_unstructured: one threshold over three layers gives torch's masks", "[prune][golden]") {
  for (const char* name : {"global", "twice_global"}) {
    INFO(name);
    std::vector<std::vector<float>> ws;
    std::vector<Mask> ms;
    for (int i = 0; i < 3; ++i) {
      ws.push_back(values(fmt::format("{}.{}.weight", name, i)));
      ms.push_back(ones(ws.back().size()));
    }
    std::vector<const std::vector<float>*> wp{&ws[0], &ws[1], &ws[2]};
    std::vector<Mask*> mp{&ms[0], &ms[1], &ms[2]};
    if (std::string(name) == "global") {
      global_unstructured(wp, mp, Amount::of_fraction(0.6));
    } else {
      global_unstructured(wp, mp, Amount::of_fraction(0.5));
      global_unstructured(wp, mp, Amount::of_fraction(0.5));
    }
    for (int i = 0; i < 3; ++i) REQUIRE(ms[i] == values(fmt::format("{}.{}.mask", name, i)));
  }
}

TEST_CASE("Pruner: l1_unstructured twice on a Linear equals torch's PruningContainer", "[prune][golden]") {
  auto lin = std::make_shared<nn::Linear>(30, 10);
  load(lin->weight(), "twice_l1.weight");
  PruneConfig c = config(Method::L1Unstructured);
  Pruner p(*lin, c, 0);
  p.prune(Amount::of_fraction(0.5));
  REQUIRE(p.sparsity() == 0.5);
  p.prune(Amount::of_fraction(0.5));
  const std::vector<float> want = values("twice_l1.mask");
  REQUIRE(p.targets().at(0).mask == want);
  // The weight holds the mask: w = w_orig * mask.
  const std::vector<float> w = lin->weight().to_vector<float>(), orig = values("twice_l1.weight");
  for (size_t i = 0; i < w.size(); ++i) REQUIRE(w[i] == orig[i] * want[i]);
}

TEST_CASE("Pruner: global_unstructured twice over Conv2d, Conv2d, Linear equals torch", "[prune][golden]") {
  auto c0 = std::make_shared<nn::Conv2d>(4, 8, 3), c1 = std::make_shared<nn::Conv2d>(8, 16, 3);
  auto l2 = std::make_shared<nn::Linear>(64, 10);
  nn::Sequential seq{c0, c1, l2};
  load(c0->weight(), "twice_global.0.weight");
  load(c1->weight(), "twice_global.1.weight");
  load(l2->weight(), "twice_global.2.weight");
  Pruner p(seq, config(Method::GlobalUnstructured), 0);
  REQUIRE(p.targets().size() == 3);
  p.prune(Amount::of_fraction(0.5));
  p.prune(Amount::of_fraction(0.5));
  for (int i = 0; i < 3; ++i) REQUIRE(p.targets()[i].mask == values(fmt::format("twice_global.{}.mask", i)));
}

}  // namespace
}  // namespace ingot::prune
