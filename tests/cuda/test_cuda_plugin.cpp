// The cuda plugin exists wherever nvcc does, loads everywhere, and on a machine without a GPU its
// probe names the reason ("no NVIDIA driver" / "no CUDA device") instead of CUDA's error 35;
// the caching allocator's size classes. Runs everywhere (GPU tests are in test_cuda_gpu).
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>

#include "cuda_plugin_path.h"
#include "test_support.h"
#if INGOT_CUDA_ALLOCATOR_TESTS
#include "caching_allocator.h"
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
                         rec.reason.find("NVIDIA driver too old") != std::string::npos;
  CHECK(explained);
  CHECK(rec.reason.find("error 35") == std::string::npos);
  std::cout << "cuda plugin unavailable here: " << rec.reason << "\n";
}

}  // namespace
}  // namespace ingot

#if INGOT_CUDA_ALLOCATOR_TESTS
namespace ingot::cuda {
namespace {

// Pure host arithmetic: runs everywhere the plugin is built.
TEST_CASE("cuda allocator: size classes", "[cuda][allocator]") {
  CHECK(CachingAllocator::round_size(0) == 512);
  CHECK(CachingAllocator::round_size(1) == 512);
  CHECK(CachingAllocator::round_size(513) == 1024);
  CHECK(CachingAllocator::round_size((1 << 20) - 1) == (1 << 20));
  CHECK(CachingAllocator::round_size((1 << 20) + 1) == (2 << 20));
  CHECK(CachingAllocator::round_size((5 << 20) + 3) == (6 << 20));
}

}  // namespace
}  // namespace ingot::cuda
#endif
