// The cuda plugin exists wherever nvcc does, loads everywhere, and on a machine without a GPU its
// probe names the reason ("no NVIDIA driver" / "no CUDA device") instead of CUDA's error 35; which
// devices it serves (compute capability 8.0 or newer) and its TF32 switches. Runs everywhere (GPU
// tests are in test_cuda_gpu).
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>

#include "cuda_plugin_path.h"
#include "test_support.h"
#if INGOT_CUDA_ALLOCATOR_TESTS
#include "device_requirements.h"
#include "tf32_policy.h"
#endif

namespace ingot {
namespace {

TEST_CASE("cuda plugin: built wherever nvcc exists", "[cuda]") {
  if (!INGOT_CUDA_EXPECTED) {
    test::skip("nvcc not found at configure time (or plugins disabled): the cuda plugin is not expected");
    return;
  }
  INFO("nvcc " << INGOT_CUDA_NVCC << " exists, so configure must build the cuda plugin (see its 'Ingot: cuda plugin' line)");
  REQUIRE(std::filesystem::exists(test::cuda_plugin_file()));
}

TEST_CASE("cuda plugin: loads, and its probe gives a reason when unavailable", "[cuda]") {
  if (!std::filesystem::exists(test::cuda_plugin_file())) {
    test::skip("cuda plugin not built");
    return;
  }
  const PluginRecord& rec = test::cuda_record();
  INFO("reason: " << rec.reason);
  CHECK(rec.name == "cuda");
  CHECK((rec.kinds & INGOT_KIND_BACKEND) != 0);
  if (rec.available) {
    CHECK(rec.reason.empty());
    REQUIRE(rec.backends.size() == 1);
    CHECK(rec.backends[0] == "cuda");
    return;
  }
  // Not a load error (missing library, ABI): the plugin itself said why it cannot run here.
  const bool explained = rec.reason.find("no NVIDIA driver") != std::string::npos ||
                         rec.reason.find("no CUDA device") != std::string::npos ||
                         rec.reason.find("NVIDIA driver too old") != std::string::npos ||
                         rec.reason.find("no CUDA device this plugin can use") != std::string::npos;
  CHECK(explained);
  CHECK(rec.reason.find("error 35") == std::string::npos);
  std::cout << "cuda plugin unavailable here: " << rec.reason << "\n";
}

}  // namespace
}  // namespace ingot

#if INGOT_CUDA_ALLOCATOR_TESTS
namespace ingot::cuda {
namespace {

DeviceCapability gpu(const char* name, int major, int minor) { return {name, major, minor}; }

TEST_CASE("cuda plugin: devices below compute capability 8.0 are not served, with the reason", "[cuda]") {
  const DeviceSelection all = select_devices({gpu("H200", 9, 0), gpu("A100", 8, 0), gpu("RTX 4090", 8, 9)}, nullptr);
  CHECK(all.served == 3);
  CHECK(all.problem.empty());

  const DeviceSelection none = select_devices({gpu("Tesla T4", 7, 5)}, nullptr);
  CHECK(none.served == 0);
  CHECK(none.problem.find("device 0: Tesla T4 has compute capability 7.5") != std::string::npos);
  CHECK(none.problem.find("built for sm_80 and sm_90") != std::string::npos);
  CHECK(none.problem.find("CUDA_VISIBLE_DEVICES") == std::string::npos);  // nothing to point at

  // Served indices stay CUDA's: devices after the first unsupported one are left out and named.
  const DeviceSelection tail = select_devices({gpu("H200", 9, 0), gpu("V100", 7, 0), gpu("H100", 9, 0)}, nullptr);
  CHECK(tail.served == 1);
  CHECK(tail.problem.find("device 1: V100 has compute capability 7.0") != std::string::npos);
  CHECK(tail.problem.find("serving devices 0 .. 0 only") != std::string::npos);
  CHECK(tail.problem.find("set CUDA_VISIBLE_DEVICES=0,2") != std::string::npos);

  const DeviceSelection first = select_devices({gpu("P100", 6, 0), gpu("A100", 8, 0)}, "3,5");
  CHECK(first.served == 0);
  CHECK(first.problem.find("list only those in CUDA_VISIBLE_DEVICES (now \"3,5\"; supported positions 1)") !=
        std::string::npos);

  const DeviceSelection last = select_devices({gpu("A100", 8, 0), gpu("T4", 7, 5)}, nullptr);
  CHECK(last.served == 1);
  CHECK(last.problem.find("CUDA_VISIBLE_DEVICES") == std::string::npos);  // every supported one is served
}

TEST_CASE("cuda plugin: TF32 switches default to PyTorch's and accept only 0 or 1", "[cuda]") {
  CHECK(parse_tf32_switch("INGOT_CUDA_CONV_TF32", nullptr, true));
  CHECK_FALSE(parse_tf32_switch("INGOT_CUDA_MATMUL_TF32", nullptr, false));
  CHECK_FALSE(parse_tf32_switch("INGOT_CUDA_CONV_TF32", "", false));
  CHECK_FALSE(parse_tf32_switch("INGOT_CUDA_CONV_TF32", "0", true));
  CHECK(parse_tf32_switch("INGOT_CUDA_MATMUL_TF32", "1", false));
  try {
    parse_tf32_switch("INGOT_CUDA_MATMUL_TF32", "yes", false);
    FAIL("\"yes\" was accepted");
  } catch (const sdk::Failure& e) {
    CHECK(e.code() == INGOT_ERR_INVALID_ARGUMENT);
    CHECK(std::string(e.what()) ==
          "cuda: INGOT_CUDA_MATMUL_TF32=yes is not a valid switch: use 0 (no TF32) or 1 (allow TF32)");
  }
}

}  // namespace
}  // namespace ingot::cuda
#endif
