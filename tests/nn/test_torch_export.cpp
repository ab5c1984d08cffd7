// Weights move to PyTorch: each preset's state_dict is written to a safetensors file with an
// input and Ingot's logits; Debian's torch (tests/golden/make_nn.py --check-export) builds the
// equivalent torch.nn model, loads the file strictly by name and compares the logits within
// 1e-4 + 1e-3 |b|. Reported skipped where /usr/bin/python3 has no torch.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "ingot/base/grad_mode.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;

TEST_CASE("nn torch export: presets give torch's logits after a round trip", "[nn][torch]") {
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0) {
    test::skip("Debian's python3-torch is not installed (scripts/test installs it)");
    return;
  }
  // JSON, which is also the YAML flow syntax build_model reads.
  const std::vector<std::pair<std::string, std::string>> specs = {
      {"mlp", R"({"preset": "mlp", "sizes": [48, 32, 16, 10], "activation": "gelu", "dropout": 0.2})"},
      {"simple_cnn", R"({"preset": "simple_cnn", "input_shape": [1, 12, 12], "width": 8, "hidden": 32, "classes": 7})"},
      {"resnet", R"({"preset": "resnet", "depth": 14, "width": 8, "input_shape": [3, 8, 8], "classes": 5})"},
  };
  io::NamedTensors out;
  io::Metadata meta;
  for (const auto& [name, spec] : specs) {
    Generator gen(17);
    auto model = nn::build_model(YAML::Load(spec), name + ".yaml", gen);
    const Shape in = name == "mlp" ? Shape{4, 3, 4, 4} : name == "simple_cnn" ? Shape{4, 1, 12, 12} : Shape{4, 3, 8, 8};
    {
      NoGradGuard no_grad;
      model->forward(test::random_tensor(in, DType::F32, 1, -2.0, 3.0));  // non-trivial running stats
    }
    model->eval();
    const Tensor x = test::random_tensor(in, DType::F32, 2);
    const Tensor logits = model->forward(x);
    for (const auto& [k, t] : model->state_dict()) out.emplace_back(name + ".state." + k, t);
    out.emplace_back(name + ".input", x);
    out.emplace_back(name + ".logits", logits.detach());
    meta[name + ".spec"] = spec;
  }
  const auto path = std::filesystem::temp_directory_path() / fmt::format("ingot_nn_export_{}.safetensors", ::getpid());
  io::save_safetensors(path, out, meta);
  const std::string cmd = fmt::format("/usr/bin/python3 {} --check-export {}", INGOT_MAKE_NN_PY, path.string());
  const int rc = std::system(cmd.c_str());
  std::filesystem::remove(path);
  CHECK(rc == 0);
}
