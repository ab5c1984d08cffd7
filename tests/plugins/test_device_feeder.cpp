// DeviceFeeder on the fake two-device plugin: batches arrive on the device with the host loader's
// values, copied from pinned memory on a side stream, and the compute stream waits for each
// batch's copy exactly once, when it is handed out.
#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "ingot/data/synthetic.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/train/device_feeder.h"
#include "test_support.h"

namespace ingot {
namespace {

struct StreamCounters {
  int live_streams = 0, side_copies = 0, waits = 0;
};

StreamCounters stream_counters() {
  const std::string path = std::string(INGOT_DEVICE_FIXTURE_DIR) + "/libfixture_device.so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto* fn = reinterpret_cast<void (*)(int*, int*, int*)>(dlsym(h, "fixture_device_stream_counters"));
  REQUIRE(fn != nullptr);
  StreamCounters c;
  fn(&c.live_streams, &c.side_copies, &c.waits);
  dlclose(h);
  return c;
}

std::unique_ptr<data::DataLoader> loader() {
  data::SyntheticSpec spec;
  spec.size = 40;
  spec.height = spec.width = 3;
  data::LoaderOptions o;
  o.batch_size = 8;
  return std::make_unique<data::DataLoader>(data::synthetic_dataset(spec, 4), o);
}

}  // namespace

TEST_CASE("device feeder: batches copied on a side stream, waited for when handed out", "[plugins][device][data]") {
  PluginLoader::instance().load_folder(INGOT_DEVICE_FIXTURE_DIR);
  const Device dev{DeviceKind::CUDA, 1};
  auto host = loader(), fed = loader();
  host->begin_epoch(0);
  fed->begin_epoch(0);
  const StreamCounters c0 = stream_counters();
  int batches = 0;
  {
    train::DeviceFeeder feeder(*fed, dev, 2);
    REQUIRE(feeder.uses_side_stream());
    CHECK(stream_counters().live_streams == c0.live_streams + 1);
    while (auto b = feeder.next()) {
      const auto expected = host->next();
      REQUIRE(expected);
      CHECK(b->inputs.device() == dev);
      CHECK(b->targets.device() == dev);
      CHECK(b->index == expected->index);
      INGOT_REQUIRE_CLOSE(b->inputs.to(Device::cpu()), expected->inputs, 0.0, 0.0);
      CHECK(b->targets.to(Device::cpu()).to_vector<int64_t>() == expected->targets.to_vector<int64_t>());
      ++batches;
      CHECK(stream_counters().waits == c0.waits + batches);
    }
    CHECK_FALSE(host->next());
  }
  CHECK(batches == 5);
  const StreamCounters c1 = stream_counters();
  CHECK(c1.side_copies == c0.side_copies + 2 * batches);  // inputs and targets of each batch
  CHECK(c1.live_streams == c0.live_streams);
}

}  // namespace ingot
