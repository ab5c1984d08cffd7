// tune_malloc: two mallopt calls, skipped when the environment already says how malloc behaves.
#include "malloc_policy.h"

#include <malloc.h>

#include <cstdlib>
#include <string_view>

namespace ingot::cli {

namespace {

bool environment_sets_malloc() {
  if (const char* t = std::getenv("GLIBC_TUNABLES");
      t != nullptr && std::string_view(t).find("malloc") != std::string_view::npos)
    return true;
  for (const char* v : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

}  // namespace

void tune_malloc() {
  if (environment_sets_malloc()) return;
  constexpr int kMmapThreshold = 32 << 20;  // glibc's own ceiling for its dynamic threshold
  constexpr int kTrimThreshold = 64 << 20;
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

}  // namespace ingot::cli
