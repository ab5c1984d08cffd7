// State-dict loading: strict and non-strict matching by name, torch-style error lists,
// all-or-nothing copies into the model's existing tensors, and the check for non-finite weights.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/io/state_dict.h"
#include "io_test_util.h"
#include "test_support.h"

using namespace ingot;
using Catch::Matchers::Contains;
using ingot::test::ScratchDir;

namespace {

io::StateDict model() {
  io::StateDict m;
  m["fc.weight"] = Tensor::empty({3, 4}, DType::F32);
  m["fc.bias"] = Tensor::empty({3}, DType::F32);
  m["bn.num_batches_tracked"] = Tensor::empty({}, DType::I64);
  for (auto& [_, t] : m) t.fill_(0.0);
  return m;
}

io::StateDict checkpoint() {
  return {{"fc.weight", test::random_tensor({3, 4}, DType::F32, 11)},
          {"fc.bias", test::random_tensor({3}, DType::F32, 12)},
          {"bn.num_batches_tracked", Tensor::scalar(42, DType::I64)}};
}

}  // namespace

TEST_CASE("load_into copies every tensor into the existing storage", "[io][state_dict]") {
  const io::StateDict m = model();
  const void* weight_memory = m.at("fc.weight").storage()->data();
  const io::StateDict ck = checkpoint();
  const io::LoadReport report = io::load_into(m, ck);
  CHECK(report.missing.empty());
  CHECK(report.unexpected.empty());
  CHECK(m.at("fc.weight").storage()->data() == weight_memory);
  for (const auto& [name, t] : ck) {
    INFO(name);
    INGOT_REQUIRE_CLOSE(m.at(name), t, 0.0, 0.0);
  }
  // The model holds copies, not the checkpoint's tensors.
  ck.at("fc.bias").fill_(5.0);
  CHECK(m.at("fc.bias").to_vector<float>() != std::vector<float>(3, 5.0f));
}

TEST_CASE("a strict load lists every problem in one message and copies nothing", "[io][state_dict]") {
  const io::StateDict m = model();
  io::StateDict ck = checkpoint();
  ck.erase("fc.bias");
  ck["fc.weight"] = test::random_tensor({4, 3}, DType::F32, 1);
  ck["bn.num_batches_tracked"] = Tensor::scalar(1, DType::I32);
  ck["head.weight"] = Tensor::scalar(1);
  ck["head.bias"] = Tensor::scalar(1);
  try {
    io::load_into(m, ck, true, "ckpt/epoch_3.safetensors");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "ckpt/epoch_3.safetensors: error(s) loading the state dict: missing key(s): 'fc.bias'; "
          "unexpected key(s): 'head.bias', 'head.weight'; "
          "dtype mismatch for 'bn.num_batches_tracked': the checkpoint has int32, the model int64; "
          "size mismatch for 'fc.weight': the checkpoint has shape [4, 3], the model [3, 4]");
  }
  CHECK(m.at("bn.num_batches_tracked").item() == 0.0);
  CHECK(m.at("fc.weight").to_vector<float>() == std::vector<float>(12, 0.0f));
}

TEST_CASE("a non-strict load reports missing and unexpected keys but still refuses shape mismatches",
          "[io][state_dict]") {
  const io::StateDict m = model();
  io::StateDict ck = checkpoint();
  ck.erase("fc.bias");
  ck["extra"] = Tensor::scalar(3);
  const io::LoadReport report = io::load_into(m, ck, false);
  CHECK(report.missing == std::vector<std::string>{"fc.bias"});
  CHECK(report.unexpected == std::vector<std::string>{"extra"});
  CHECK(m.at("bn.num_batches_tracked").item() == 42.0);
  ck["fc.weight"] = Tensor::empty({12}, DType::F32);
  REQUIRE_THROWS_MATCHES(io::load_into(m, ck, false), InputError,
                         Catch::Matchers::Message("error(s) loading the state dict: size mismatch for 'fc.weight': "
                                                  "the checkpoint has shape [12], the model [3, 4]"));
}

TEST_CASE("state dicts round-trip through a file", "[io][state_dict]") {
  ScratchDir dir;
  const auto path = dir / "weights.safetensors";
  io::save_state_dict(path, checkpoint(), {{"format", "pt"}});
  const io::StateDict m = model();
  const io::Metadata meta = io::load_state_dict(path, m);
  CHECK(meta.at("format") == "pt");
  INGOT_REQUIRE_CLOSE(m.at("fc.weight"), checkpoint().at("fc.weight"), 0.0, 0.0);
  CHECK(m.at("bn.num_batches_tracked").item() == 42.0);

  io::StateDict bigger = model();
  bigger["fc2.weight"] = Tensor::empty({2}, DType::F32);
  REQUIRE_THROWS_WITH(io::load_state_dict(path, bigger), Contains(path.string() + ": error(s) loading the state dict: "
                                                                                  "missing key(s): 'fc2.weight'"));
  io::LoadReport report;
  io::load_state_dict(path, bigger, false, &report);
  CHECK(report.missing == std::vector<std::string>{"fc2.weight"});
}

TEST_CASE("loading into parameters that require grad keeps them leaves without history", "[io][state_dict]") {
  const io::StateDict m = model();
  m.at("fc.weight").set_requires_grad();
  io::load_into(m, checkpoint());
  const Tensor& w = m.at("fc.weight");
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  CHECK(w.grad_fn() == nullptr);
  INGOT_REQUIRE_CLOSE(w, checkpoint().at("fc.weight"), 0.0, 0.0);
}

TEST_CASE("load_into accepts targets in registration order", "[io][state_dict]") {
  const io::StateDict m = model();
  const io::NamedTensors ordered = {{"fc.weight", m.at("fc.weight")}, {"fc.bias", m.at("fc.bias")}};
  const io::LoadReport report = io::load_into(ordered, checkpoint(), false);
  CHECK(report.unexpected == std::vector<std::string>{"bn.num_batches_tracked"});
  INGOT_REQUIRE_CLOSE(m.at("fc.bias"), checkpoint().at("fc.bias"), 0.0, 0.0);
  const io::NamedTensors twice = {{"fc.bias", m.at("fc.bias")}, {"fc.bias", m.at("fc.bias")}};
  REQUIRE_THROWS_WITH(io::load_into(twice, checkpoint(), false), Contains("two target tensors are named 'fc.bias'"));
}

TEST_CASE("first_nonfinite names the tensor, the value and its element, in every float dtype", "[io][state_dict]") {
  const Tensor w = Tensor::from_vector<float>({1.0f, 2.0f, std::nanf(""), 4.0f}, {2, 2});
  CHECK(io::first_nonfinite({{"fc.weight", w}}) == "'fc.weight' holds nan at element 2 of [2, 2]");
  const Tensor inf = Tensor::from_vector<double>({0.5, -HUGE_VAL}, {2});
  CHECK(io::first_nonfinite({{"ok", Tensor::scalar(1.0)}, {"b", inf}}) == "'b' holds -inf at element 1 of [2]");
  CHECK(io::first_nonfinite({{"h", inf.to(DType::F16)}}) == "'h' holds -inf at element 1 of [2]");
  CHECK(io::first_nonfinite({{"bf", w.to(DType::BF16)}}) == "'bf' holds nan at element 2 of [2, 2]");
  // Finite values, big ones included, and integer tensors pass.
  CHECK(io::first_nonfinite(
            {{"w", Tensor::from_vector<float>({3.0e38f, -1.0f}, {2})}, {"n", Tensor::scalar(7, DType::I64)}})
            .empty());
  REQUIRE_THROWS_AS(io::require_finite({{"fc.weight", w}}, "model.safetensors"), InputError);
  REQUIRE_THROWS_WITH(io::require_finite({{"fc.weight", w}}, "model.safetensors"),
                      Catch::Matchers::StartsWith("model.safetensors: 'fc.weight' holds nan at element 2 of [2, 2]: "
                                                  "the weights are not finite"));
}
