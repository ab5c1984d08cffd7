// Graph capture on a device (the fake accelerator of fixture_train_device: device kind CUDA,
// memory in host RAM, add / sub / mul / neg / relu on the device). A scalar the step's host code
// makes and copies to the device becomes a constant of the device, copied once when the graph is
// built: the step replays without host-to-device copies and gives eager's values. A copy of a
// tensor an op made stays unrecordable, and the step runs eager, saying why.
#include <catch2/catch.hpp>

#include "ingot/graph/capture.h"
#include "ingot/graph/compiled_step.h"
#include "ingot/ops/elementwise.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

using namespace ingot;

namespace {

const Device kDev{DeviceKind::CUDA, 0};

bool load_device() {
  PluginLoader::instance().load_folder(INGOT_TRAIN_DEVICE_DIR);
  for (const auto& b : BackendRegistry::instance().backends())
    if (b->name() == "train_device") return true;
  return false;
}

Tensor on_device(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>(v, {n}).to(kDev);
}

// relu(x * c - x) with c = [0.5, 2, -1, 3] made by host code each step and copied to the device.
std::vector<Tensor> step(const Tensor& x) {
  const Tensor c = on_device({0.5f, 2.0f, -1.0f, 3.0f});
  return {relu(x * c - x)};
}

}  // namespace

TEST_CASE("capture on a device: a host scalar copied there is a device constant, and replays equal eager") {
  REQUIRE(load_device());
  const Tensor x0 = on_device({1.0f, -2.0f, 3.0f, 4.0f});
  const graph::Captured c = graph::capture([&] { return step(x0); }, {x0}, {});
  REQUIRE(c.failure.empty());
  REQUIRE(c.graph);
  int uploads = 0;
  for (const graph::Value& v : c.graph->values)
    if (v.kind == graph::ValueKind::Constant && !v.upload.empty()) {
      ++uploads;
      CHECK(v.device == kDev);
      CHECK(v.storage->device() == kDev);
      CHECK(v.upload.size() == 4 * sizeof(float));
    }
  CHECK(uploads == 1);

  graph::CompiledStep compiled(graph::CompileOptions{}, {});
  for (int i = 0; i < 7; ++i) {
    const float s = static_cast<float>(i) - 3.0f;
    const Tensor x = on_device({s, 1.0f + s, -2.0f * s, 0.25f});
    const Tensor want = step(x).front().to(Device::cpu());
    const Tensor got = compiled.run({x}, {}, [&] { return step(x); }).front();
    CHECK(got.device() == kDev);
    INGOT_REQUIRE_CLOSE(got.to(Device::cpu()), want, 0.0, 0.0);
  }
  CHECK(compiled.stats().replayed == 4);
  CHECK(compiled.stats().fallback.empty());
}

TEST_CASE("capture on a device: copying a tensor an op made stays unrecordable, and the step runs eager") {
  REQUIRE(load_device());
  const Tensor x = on_device({1.0f, -2.0f, 3.0f, 4.0f});
  const Tensor host = Tensor::from_vector<float>({1.0f, 2.0f, 3.0f, 4.0f}, {4});
  const auto body = [&] { return std::vector<Tensor>{x * (host * 2.0).to(kDev)}; };  // host * 2 runs as an op
  const graph::Captured c = graph::capture(body, {x}, {});
  CHECK_FALSE(c.graph);
  CHECK_THAT(c.failure, Catch::Contains("a copy between devices"));
  // and back to the host inside a step: unrecordable too
  const graph::Captured back = graph::capture([&] { return std::vector<Tensor>{(x * x).to(Device::cpu())}; }, {x}, {});
  CHECK_FALSE(back.graph);
  CHECK_THAT(back.failure, Catch::Contains("a copy between devices"));
}
