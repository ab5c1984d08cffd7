// The extension loader: a good extension registers its types (tagged with its name), and every
// bad one is refused with its reason: another core version, another C++ ABI, a kernel plugin in
// the wrong folder, a register function that throws, a type name already taken.
#include <catch2/catch.hpp>

#include "ingot/extension/extension_loader.h"
#include "ingot/nn/loss_registry.h"

using namespace ingot;

namespace {

ExtensionRecord load(const std::string& name) {
  return ExtensionLoader::instance().load_file(std::string(INGOT_EXTENSION_FIXTURE_DIR) + "/lib" + name + ".so");
}

}  // namespace

TEST_CASE("extensions: a good extension registers its types under its own name", "[extension]") {
  const ExtensionRecord r = load("ext_good");
  INFO(r.reason);
  REQUIRE(r.available);
  CHECK(r.name == "ext_good");
  CHECK(r.version == "1.2.3");
  CHECK(r.added == std::vector<std::string>{"loss fixture_l1"});
  const auto& entry = nn::loss_registry().entries().at("fixture_l1");
  CHECK(entry.origin == "ext_good");
  const ExtensionRecord again = load("ext_good");
  CHECK_FALSE(again.available);
  CHECK_THAT(again.reason, Catch::Contains("duplicate of"));
}

TEST_CASE("extensions: version, ABI, kind and registration errors are refused with the reason", "[extension]") {
  const ExtensionRecord old = load("ext_old_core");
  CHECK_FALSE(old.available);
  CHECK_THAT(old.reason, Catch::Contains("built against Ingot 0.0.1") && Catch::Contains("rebuild it"));
  const ExtensionRecord abi = load("ext_other_abi");
  CHECK_FALSE(abi.available);
  CHECK_THAT(abi.reason, Catch::Contains("C++ ABI 'libc++-from-elsewhere'"));
  const ExtensionRecord kernel = ExtensionLoader::instance().load_file(INGOT_KERNEL_PLUGIN);
  CHECK_FALSE(kernel.available);
  CHECK_THAT(kernel.reason, Catch::Contains("not an extension plugin"));
  const ExtensionRecord throws = load("ext_throws");
  CHECK_FALSE(throws.available);
  CHECK_THAT(throws.reason, Catch::Contains("registration failed: fixture: cannot register today"));
  const ExtensionRecord clash = load("ext_clash");
  CHECK_FALSE(clash.available);
  CHECK_THAT(clash.reason, Catch::Contains("loss type 'mse' from ext_clash is already registered by builtin"));
  const ExtensionRecord missing = ExtensionLoader::instance().load_file("/nonexistent/libnothing.so");
  CHECK_FALSE(missing.available);
  CHECK_THAT(missing.reason, Catch::Contains("cannot be loaded"));
  CHECK_FALSE(nn::loss_registry().has("fixture_old"));
  CHECK_FALSE(nn::loss_registry().has("fixture_abi"));
}
