// Scaled dot-product attention against torch.nn.functional.scaled_dot_product_attention: output
// and the gradients of q, k and v on committed fixtures (tests/golden/make_attention.py, made with
// PyTorch 2.x), on every CPU backend in turn. Causal (upper-left and lower-right), boolean padding
// and full masks, an additive mask with its own scale, odd sequence lengths and head sizes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ingot/io/safetensors.h"
#include "ingot/ops/attention.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

CausalMask causal_of(const std::string& s) {
  if (s == "upper_left") return CausalMask::UpperLeft;
  if (s == "lower_right") return CausalMask::LowerRight;
  REQUIRE(s == "none");
  return CausalMask::None;
}

TEST_CASE("scaled_dot_product_attention matches torch forward and backward (f32, bf16)",
          "[ops][attention][golden]") {
  const io::SafetensorsFile file =
      io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "attention.safetensors");
  test::RestoreBackends restore;
  int checked = 0;
  for (const std::string& backend : test::cpu_backends()) {
    BackendRegistry::instance().restrict_to({backend});
    for (const auto& [key, value] : file.metadata) {
      if (key == "torch" || key.rfind("__", 0) == 0) continue;
      const auto c = nlohmann::json::parse(value);
      INFO("backend " << backend << ", case '" << key << "', torch " << file.metadata.at("torch"));
      const auto at = [&](const std::string& n) { return file.tensors.at(key + "." + n); };
      // f32: torch's kernel sums in another order (and in blocks); 1e-5 relative with a small
      // absolute floor for entries near zero. bf16: both round the inputs, probabilities and
      // output to bf16 at different points; 2e-2.
      const bool bf16 = c.at("dtype") == "bf16";
      const double atol = bf16 ? 2e-2 : 1e-6, rtol = bf16 ? 2e-2 : 1e-5;
      const Tensor q = at("q").detach(), k = at("k").detach(), v = at("v").detach();
      q.set_requires_grad();
      k.set_requires_grad();
      v.set_requires_grad();
      AttentionOptions options;
      options.causal = causal_of(c.at("causal"));
      if (!c.at("scale").is_null()) options.scale = c.at("scale").get<double>();
      if (file.tensors.count(key + ".mask") != 0) options.mask = at("mask");
      const Tensor out = scaled_dot_product_attention(q, k, v, options);
      REQUIRE(out.dtype() == q.dtype());
      INGOT_REQUIRE_CLOSE(out, at("out"), atol, rtol);
      out.backward(at("grad_out"));
      INGOT_REQUIRE_CLOSE(q.grad(), at("grad_q"), atol, rtol);
      INGOT_REQUIRE_CLOSE(k.grad(), at("grad_k"), atol, rtol);
      INGOT_REQUIRE_CLOSE(v.grad(), at("grad_v"), atol, rtol);
      ++checked;
    }
  }
  CHECK(checked >= 16);
}

}  // namespace
}  // namespace ingot
