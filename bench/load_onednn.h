// The cpu_onednn plugin for a benchmark binary: loaded once, with the reason on stderr when it
// cannot be (the benchmark then skips its oneDNN rows).
#pragma once

#include <cstdio>

#include "ingot/runtime/plugin_loader.h"

namespace ingot::bench {

inline bool load_onednn() {
  static const bool ok = [] {
    PluginLoader::instance().load_all();
    const PluginRecord* rec = PluginLoader::instance().find("cpu_onednn");
    if (rec == nullptr || !rec->available) {
      std::fprintf(stderr, "cpu_onednn plugin unavailable: %s\n", rec ? rec->reason.c_str() : "not found");
      return false;
    }
    return true;
  }();
  return ok;
}

}  // namespace ingot::bench
