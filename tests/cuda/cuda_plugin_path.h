// Where test_cuda finds the cuda plugin: $INGOT_CUDA_PLUGIN_FILE (a bundle on a GPU machine), else
// the build's plugin folder; and the loaded plugin's record.
#pragma once

#include <cstdlib>
#include <string>

#include "ingot/runtime/plugin_loader.h"
#include "test_support.h"

namespace ingot::test {

inline std::string cuda_plugin_file() {
  const char* env = std::getenv("INGOT_CUDA_PLUGIN_FILE");
  return env != nullptr && env[0] != '\0' ? env : INGOT_CUDA_PLUGIN_FILE;
}

/// The cuda plugin's record, loading it once (its probe runs then).
inline const PluginRecord& cuda_record() {
  static const PluginRecord rec = [] {
    if (const PluginRecord* r = PluginLoader::instance().find("cuda")) return *r;
    return PluginLoader::instance().load_file(cuda_plugin_file());
  }();
  return rec;
}

/// True when the cuda backend is usable; otherwise reports the test skipped with the reason.
inline bool gpu_ready() {
  const PluginRecord& rec = cuda_record();
  if (!rec.available) {
    skip("cuda backend unavailable: " + (rec.reason.empty() ? std::string("plugin not built") : rec.reason));
    return false;
  }
  return true;
}

}  // namespace ingot::test
