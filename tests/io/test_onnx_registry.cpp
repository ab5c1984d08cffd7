// The ONNX exporter registry without onnxruntime: a layer without an exporter is one error naming
// its path and type, a model in training mode is refused, a type cannot be registered twice, an
// exporter registered for a new layer type (as an extension plugin does) is used, and pooling that
// ONNX computes differently is refused by name.
#include <catch2/catch.hpp>

#include "ingot/base/error.h"
#include "ingot/io/onnx_export.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/elementwise.h"
#include "onnx_test_util.h"
#include "test_support.h"

using namespace ingot;

namespace {

// A layer core does not know: y = 2 x.
class Doubler : public nn::Module {
 public:
  Doubler() : nn::Module("TestDoubler") {}
  Tensor forward(const Tensor& x) override { return x * 2.0; }
};

std::shared_ptr<nn::Sequential> model_with_doubler(Generator& gen) {
  auto inner = std::make_shared<nn::Sequential>();
  inner->push_back("act", std::make_shared<nn::ReLU>()).push_back("twice", std::make_shared<Doubler>());
  auto model = std::make_shared<nn::Sequential>();
  model->push_back("fc", std::make_shared<nn::Linear>(4, 3, true, &gen)).push_back("block", inner);
  model->eval();
  return model;
}

}  // namespace

TEST_CASE("onnx export: a layer without an exporter is one error naming its path and type", "[onnx]") {
  Generator gen(1);
  auto model = std::make_shared<nn::Sequential>();
  model->push_back("fc", std::make_shared<nn::Linear>(4, 3, true, &gen));
  auto inner = std::make_shared<nn::Sequential>();
  inner->push_back("odd", std::make_shared<Doubler>());
  model->push_back("block", inner);
  // A type name of its own, so that the exporter the next case registers does not apply.
  class Unknown : public nn::Module {
   public:
    Unknown() : nn::Module("TestUnknownLayer") {}
    Tensor forward(const Tensor& x) override { return x; }
  };
  inner->push_back("mystery", std::make_shared<Unknown>());
  model->eval();
  io::onnx::ExportOptions o;
  o.input_shape = Shape{4};
  if (!io::onnx::exporter_registry().find("TestDoubler")) {
    REQUIRE_THROWS_AS(io::onnx::export_onnx(*model, o), InputError);
    REQUIRE_THROWS_WITH(io::onnx::export_onnx(*model, o),
                        Catch::Contains("layer 'block.odd' (TestDoubler) has no ONNX exporter"));
  }
  REQUIRE_THROWS_WITH(io::onnx::export_onnx(*model->get_submodule("block.mystery"), o),
                      Catch::Contains("layer '<model>' (TestUnknownLayer) has no ONNX exporter"));
}

TEST_CASE("onnx export: a model in training mode is refused", "[onnx]") {
  Generator gen(2);
  auto mlp = nn::make_mlp({{4, 3}, "relu", 0.5}, &gen);
  io::onnx::ExportOptions o;
  o.input_shape = Shape{4};
  REQUIRE_THROWS_WITH(io::onnx::export_onnx(*mlp, o), Catch::Contains("training mode"));
  mlp->eval();
  REQUIRE(io::onnx::export_onnx(*mlp, o).bytes.size() > 100);
}

TEST_CASE("onnx export: a type's exporter cannot be registered twice", "[onnx]") {
  REQUIRE_THROWS_WITH(io::onnx::exporter_registry().add("Linear", {}),
                      Catch::Contains("ONNX exporter for layer type 'Linear'") && Catch::Contains("builtin"));
}

TEST_CASE("onnx export: an exporter registered for a new layer type is used (as a plugin registers one)", "[onnx]") {
  if (!io::onnx::exporter_registry().find("TestDoubler"))
    io::onnx::exporter_registry().add(
        "TestDoubler", [](io::onnx::OnnxGraph& g, const nn::Module&, const std::string& path, const std::string& x) {
          const std::string two = g.constant_f32(path + "_two", {2.0f}, Shape());
          return g.node("Mul", {x, two}, {}, path);
        });
  const auto python = ingot::test::onnx_python_or_skip();
  if (!python) return;
  Generator gen(3);
  auto model = model_with_doubler(gen);
  const Tensor x = test::random_tensor(Shape{5, 4}, DType::F32, 11);
  const Tensor expected = test::forward(*model, x);
  const test::OnnxRun r = test::run_exported(*python, *model, Shape{4}, x);
  INGOT_REQUIRE_CLOSE(r.logits, expected, 1e-5, 1e-5);
}

TEST_CASE("onnx export: a ceil_mode window torch drops and uneven adaptive pooling are refused by name", "[onnx]") {
  auto pool = std::make_shared<nn::Sequential>();
  pool->push_back("pool", std::make_shared<nn::MaxPool2d>(Pool2dParams{{2, 2}, {2, 2}, {1, 1}, true}));
  pool->eval();
  io::onnx::ExportOptions o;
  o.input_shape = Shape{1, 5, 5};  // torch: 3x3 (the 4th window would start in the padding); ONNX: 4x4
  REQUIRE_THROWS_WITH(io::onnx::export_onnx(*pool, o),
                      Catch::Contains("layer 'pool' (MaxPool2d) with ceil_mode") && Catch::Contains("3 vs 4"));
  o.input_shape = Shape{1, 6, 6};  // no dropped window: exported
  CHECK_NOTHROW(io::onnx::export_onnx(*pool, o));
  auto adaptive = std::make_shared<nn::Sequential>();
  adaptive->push_back("gap", std::make_shared<nn::AdaptiveAvgPool2d>(std::array<int64_t, 2>{3, 3}));
  adaptive->eval();
  o.input_shape = Shape{1, 7, 7};
  REQUIRE_THROWS_WITH(io::onnx::export_onnx(*adaptive, o),
                      Catch::Contains("layer 'gap' (AdaptiveAvgPool2d) pools 7x7 to 3x3"));
}
