// BackendRegistry's checks on a backend's tables (each rejection names the plugin and the fault),
// and the built-in reference as a host backend: one device, no memory entries.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/plugin/sdk.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/registry.h"

namespace ingot {
namespace {

class Declines final : public sdk::ComputeImpl {
 public:
  bool supports(const sdk::OpCall&) override { return false; }
  void execute(const sdk::OpCall&, const ingot_exec_context&) override {}
};

class Devices final : public sdk::DeviceImpl {
 public:
  explicit Devices(int32_t count) : count_(count) {}
  int32_t device_count() override { return count_; }
  void* alloc(int32_t, size_t) override { return nullptr; }
  void free(int32_t, void*) override {}
  void copy(int32_t, void*, int32_t, const void*, int32_t, size_t, const ingot_exec_context*, bool) override {}

 private:
  int32_t count_;
};

// Registers a backend built from these tables and returns the error it raised ("" if none).
std::string rejection(const ingot_device_table& device, const ingot_compute_table* compute = nullptr) {
  static Declines declines;
  const ingot_backend* b = sdk::make_backend(&declines, device, "checked_backend", 1);
  if (compute != nullptr) {
    auto* copy = new ingot_backend(*b);
    copy->compute = compute;
    b = copy;
  }
  // Backend tables live for the process (sdk.h), rejected ones too: kept reachable, never freed.
  static auto* kept = new std::vector<const ingot_backend*>();
  kept->push_back(b);
  try {
    BackendRegistry::instance().add(b, "bad_plugin");
  } catch (const PluginError& e) {
    CHECK(BackendRegistry::instance().find("checked_backend") == nullptr);
    return e.what();
  }
  return "";
}

TEST_CASE("registry: the reference is a host backend with one device and no memory", "[runtime][registry]") {
  const Backend& ref = BackendRegistry::instance().reference();
  CHECK(ref.device_kind() == DeviceKind::CPU);
  CHECK(ref.device_count() == 1);
  CHECK_FALSE(ref.has_device_memory());
  REQUIRE_NOTHROW(ref.check_device(0));
  REQUIRE_THROWS_WITH(ref.check_device(1), Catch::Contains("serves 1 device (cpu)"));
  REQUIRE_THROWS_WITH(ref.alloc(0, 16), Catch::Contains("does not support device memory"));
}

TEST_CASE("registry: malformed backend tables are rejected with the plugin and the fault", "[runtime][registry]") {
  auto host_with_memory = sdk::make_device_table(new Devices(1), INGOT_DEVICE_CPU);
  CHECK_THAT(rejection(host_with_memory), Catch::StartsWith("plugin bad_plugin: a host backend has memory entries"));

  auto no_copy = sdk::make_device_table(new Devices(2), INGOT_DEVICE_CUDA);
  no_copy.copy = nullptr;
  CHECK_THAT(rejection(no_copy), Catch::Contains("a device backend needs alloc, free and copy"));

  CHECK_THAT(rejection(sdk::make_device_table(new Devices(0), INGOT_DEVICE_CUDA)),
             Catch::Contains("device_count is 0"));

  auto bad_kind = sdk::make_host_device_table();
  bad_kind.device_kind = 7;
  CHECK_THAT(rejection(bad_kind), Catch::Contains("unknown device kind 7"));

  auto short_device = sdk::make_host_device_table();
  short_device.struct_size = 16;
  CHECK_THAT(rejection(short_device), Catch::Contains("device table is incomplete (struct_size 16)"));

  static ingot_compute_table no_execute = sdk::make_compute_table(new Declines());
  no_execute.execute = nullptr;
  CHECK_THAT(rejection(sdk::make_host_device_table(), &no_execute), Catch::Contains("compute table is incomplete"));

  CHECK_THAT(rejection(sdk::make_host_device_table()), Catch::Equals(""));  // a well-formed one registers
  REQUIRE(BackendRegistry::instance().find("checked_backend") != nullptr);
}

}  // namespace
}  // namespace ingot
