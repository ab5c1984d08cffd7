// PluginLoader against fixture plugins: each bad plugin is rejected with its own reason, the good
// ones still load, the kill switch works, query has no side effects; and the template plugin's ADD.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/logging.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "fixture_paths.h"
#include "test_support.h"

namespace {

std::string fixture(const std::string& name) { return ingot::test::fixture_plugin_dir() + "/lib" + name + ".so"; }

const ingot::PluginRecord& record_of(const std::string& path) {
  for (const ingot::PluginRecord& r : ingot::PluginLoader::instance().records())
    if (r.path == path) return r;
  FAIL("no record for " << path);
  throw std::logic_error("unreachable");
}

// Calls ingot_fixture_init_calls of an already loaded fixture (RTLD_NOLOAD: never loads it anew).
int init_calls(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto* fn = reinterpret_cast<int (*)()>(dlsym(h, "ingot_fixture_init_calls"));
  REQUIRE(fn != nullptr);
  const int n = fn();
  dlclose(h);  // drops only the reference taken here; the loader keeps its own
  return n;
}

void load_fixtures() { ingot::PluginLoader::instance().load_folder(ingot::test::fixture_plugin_dir()); }

}  // namespace

TEST_CASE("a missing plugin folder is recorded, not fatal", "[plugins]") {
  auto& loader = ingot::PluginLoader::instance();
  REQUIRE_NOTHROW(loader.load_folder("/nonexistent/ingot-plugins"));
  bool found = false;
  for (const auto& f : loader.folders())
    if (f.path == "/nonexistent/ingot-plugins") found = !f.exists;
  CHECK(found);
}

TEST_CASE("each bad plugin is rejected with its own reason", "[plugins]") {
  load_fixtures();
  CHECK(record_of(fixture("fixture_abi1")).reason ==
        "built for ABI 1.x, this Ingot has ABI 2.x: rebuild the plugin against this SDK");
  CHECK(record_of(fixture("fixture_probe_fails")).reason == "fixture probe: no such device here");
  CHECK(record_of(fixture("fixture_init_fails")).reason == "init failed: fixture init: resource exhausted");
  CHECK(record_of(fixture("fixture_not_a_plugin")).reason == "not an Ingot plugin: no ingot_plugin_query");
  CHECK_THAT(record_of(fixture("fixture_undefined")).reason,
             Catch::Contains("undefined symbol: ingot_fixture_missing_function"));
  CHECK(record_of(fixture("fixture_good_dup")).reason == "duplicate of " + fixture("fixture_good"));
  CHECK(record_of(fixture("fixture_probe_throws")).reason == "the plugin threw across the C ABI: fixture probe threw");
  for (const char* bad : {"fixture_abi1", "fixture_probe_fails", "fixture_init_fails", "fixture_not_a_plugin",
                          "fixture_undefined", "fixture_good_dup", "fixture_probe_throws"}) {
    INFO(bad);
    CHECK_FALSE(record_of(fixture(bad)).available);
  }
}

TEST_CASE("the good plugin loads next to the bad ones", "[plugins]") {
  load_fixtures();
  const auto& good = record_of(fixture("fixture_good"));
  CHECK(good.available);
  CHECK(good.reason.empty());
  CHECK(good.name == "fixture_good");
  CHECK(good.version == "0.0.1");
  CHECK(good.kinds == INGOT_KIND_BACKEND);
  REQUIRE(good.backends == std::vector<std::string>{"fixture_good"});
  const ingot::Backend* b = ingot::BackendRegistry::instance().find("fixture_good");
  REQUIRE(b != nullptr);
  CHECK(b->plugin() == "fixture_good");
  CHECK(ingot::PluginLoader::instance().find("fixture_good") == &good);
}

TEST_CASE("init runs once, and never after a failed probe", "[plugins]") {
  load_fixtures();
  load_fixtures();  // loading again changes nothing
  CHECK(init_calls(fixture("fixture_good")) == 1);
  CHECK(init_calls(fixture("fixture_init_fails")) == 1);
  CHECK(init_calls(fixture("fixture_probe_fails")) == 0);
  int n = 0;
  for (const auto& r : ingot::PluginLoader::instance().records())
    if (r.path == fixture("fixture_good")) ++n;
  CHECK(n == 1);
}

TEST_CASE("query has no side effects", "[plugins]") {
  load_fixtures();
  void* h = dlopen(fixture("fixture_good").c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto* query = reinterpret_cast<ingot_plugin_query_fn>(dlsym(h, INGOT_PLUGIN_QUERY_SYMBOL));
  REQUIRE(query != nullptr);
  const size_t backends_before = ingot::BackendRegistry::instance().backends().size();
  const int inits_before = init_calls(fixture("fixture_good"));
  ingot_plugin_info a{}, b{};
  query(&a);
  query(&b);
  CHECK(std::string(a.name) == std::string(b.name));
  CHECK(a.abi_major == INGOT_ABI_MAJOR);
  CHECK(a.struct_size == sizeof(ingot_plugin_info));
  CHECK(ingot::BackendRegistry::instance().backends().size() == backends_before);
  CHECK(init_calls(fixture("fixture_good")) == inits_before);
  dlclose(h);
}

TEST_CASE("INGOT_DISABLE_PLUGINS skips a plugin without loading it", "[plugins]") {
  setenv("INGOT_DISABLE_PLUGINS", "something_else, fixture_disabled", 1);
  ingot::PluginLoader::instance().load_folder(ingot::test::fixture_disabled_dir());
  unsetenv("INGOT_DISABLE_PLUGINS");
  const std::string path = ingot::test::fixture_disabled_dir() + "/libfixture_disabled.so";
  CHECK(record_of(path).reason == "disabled by INGOT_DISABLE_PLUGINS");
  CHECK(ingot::BackendRegistry::instance().find("fixture_disabled") == nullptr);
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  CHECK(h == nullptr);
  if (h != nullptr) dlclose(h);
}

TEST_CASE("INGOT_PLUGIN_PATH folders come after the build and install folders", "[plugins]") {
  setenv("INGOT_PLUGIN_PATH", "/tmp/ingot-a:/tmp/ingot-b", 1);
  const auto folders = ingot::PluginLoader::default_folders();
  unsetenv("INGOT_PLUGIN_PATH");
  REQUIRE(folders.size() >= 4);
  CHECK(folders.front().source == "build");
  CHECK(folders[folders.size() - 2].path == "/tmp/ingot-a");
  CHECK(folders.back().path == "/tmp/ingot-b");
  CHECK(folders.back().source == "INGOT_PLUGIN_PATH");
}

TEST_CASE("the template plugin loads and its ADD matches the reference", "[plugins]") {
  const ingot::PluginRecord rec = ingot::PluginLoader::instance().load_file(ingot::test::template_plugin_path());
  INFO(rec.reason);
  REQUIRE(rec.available);
  CHECK(rec.name == "template");
  auto& registry = ingot::BackendRegistry::instance();
  const ingot::Backend* t = registry.find("template");
  REQUIRE(t != nullptr);
  CHECK(t->priority() == 10);
  CHECK(t->device_kind() == ingot::DeviceKind::CPU);

  const ingot::Tensor a = ingot::test::random_tensor({3, 5}, ingot::DType::F32, 1);
  const ingot::Tensor b = ingot::test::random_tensor({3, 5}, ingot::DType::F32, 2);
  const ingot::Tensor y = ingot::Tensor::empty({3, 5});
  const ingot::Tensor ref = ingot::Tensor::empty({3, 5});
  ingot::run_op_on(*t, INGOT_OP_ADD, {a, b}, {y});
  ingot::run_op_on(registry.reference(), INGOT_OP_ADD, {a, b}, {ref});
  INGOT_REQUIRE_CLOSE(y, ref, 0.0, 0.0);

  // It declines what it does not implement: broadcasting, other dtypes, other ops.
  const auto desc = [](const ingot::Tensor& x) { return ingot::make_desc(x); };
  const ingot::Tensor row = ingot::test::random_tensor({1, 5}, ingot::DType::F32, 3);
  const ingot_tensor_desc bcast_in[2] = {desc(a), desc(row)};
  const ingot_tensor_desc out[1] = {desc(y)};
  CHECK_FALSE(t->supports(INGOT_OP_ADD, bcast_in, 2, out, 1, nullptr));
  const ingot::Tensor a64 = a.to(ingot::DType::F64), y64 = ingot::Tensor::empty({3, 5}, ingot::DType::F64);
  const ingot_tensor_desc in64[2] = {desc(a64), desc(a64)};
  const ingot_tensor_desc out64[1] = {desc(y64)};
  CHECK_FALSE(t->supports(INGOT_OP_ADD, in64, 2, out64, 1, nullptr));
  const ingot_tensor_desc same_in[2] = {desc(a), desc(b)};
  CHECK(t->supports(INGOT_OP_ADD, same_in, 2, out, 1, nullptr));
  CHECK_FALSE(t->supports(INGOT_OP_MUL, same_in, 2, out, 1, nullptr));
}

TEST_CASE("load_all searches the build folder once and is idempotent", "[plugins]") {
  auto& loader = ingot::PluginLoader::instance();
  loader.load_all();
  const size_t n = loader.records().size();
  loader.load_all();
  CHECK(loader.records().size() == n);
  const auto folders = loader.searched_folders();
  const std::string build_plugins = ingot::PluginLoader::default_folders().front().path;
  CHECK(std::find(folders.begin(), folders.end(), build_plugins) != folders.end());
  CHECK(ingot::PluginLoader::default_folders().front().source == "build");
}

TEST_CASE("log levels parse from INGOT_LOG-style names", "[plugins][logging]") {
  CHECK(ingot::parse_log_level("DEBUG") == ingot::LogLevel::Debug);
  CHECK(ingot::parse_log_level("warning") == ingot::LogLevel::Warn);
  CHECK(ingot::parse_log_level("off") == ingot::LogLevel::Off);
  CHECK_FALSE(ingot::parse_log_level("loud").has_value());
  const ingot::LogLevel before = ingot::log_level();
  ingot::set_log_level(ingot::LogLevel::Error);
  CHECK(ingot::log_level() == ingot::LogLevel::Error);
  ingot::set_log_level(before);
}

TEST_CASE("a FIFO or folder named like a plugin is skipped, never opened", "[plugins]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ingot_fifo_" + std::to_string(::getpid()));
  fs::create_directories(dir / "libfolder.so");
  REQUIRE(::mkfifo((dir / "libfifo.so").c_str(), 0600) == 0);  // dlopen of it would block
  ingot::PluginLoader& loader = ingot::PluginLoader::instance();
  const size_t before = loader.records().size();
  loader.load_folder(dir.string());
  for (size_t i = before; i < loader.records().size(); ++i) CHECK(loader.records()[i].path.find(dir.string()) != 0);
  fs::remove_all(dir);
}
