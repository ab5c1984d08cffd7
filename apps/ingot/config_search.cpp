// find_config_file: a relative config path tried in the working directory, the installed share
// folder and (for the build's binary) the source tree. This file alone gets the build's absolute
// paths, so every other object still hits ccache from another clone.
#include "config_search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ingot/base/error.h"

namespace fs = std::filesystem;

namespace ingot::cli {
namespace {

/// This process's executable (empty when /proc does not say).
fs::path executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

}  // namespace

std::vector<ConfigPlace> config_places() {
  std::error_code ec;
  std::vector<ConfigPlace> places{{fs::current_path(ec), "the working directory", false}};
  const fs::path exe = executable();
  if (exe.empty()) return places;
  if (fs::equivalent(exe, INGOT_BUILD_BINARY, ec)) {
    places.push_back({INGOT_SOURCE_DIR, "the source tree", true});
  } else {
    places.push_back({(exe.parent_path() / INGOT_SHARE_FROM_BIN).lexically_normal(), "the installed configs", true});
  }
  return places;
}

std::string find_config_file(const std::string& arg) {
  const fs::path given(arg);
  std::error_code ec;
  if (given.is_absolute() || fs::exists(given, ec)) return arg;
  std::vector<std::string> tried;
  for (const ConfigPlace& place : config_places()) {
    std::vector<fs::path> candidates{place.dir / given};
    if (!given.has_parent_path() && place.shipped) candidates.push_back(place.dir / "configs" / given);
    for (const fs::path& c : candidates)
      if (fs::is_regular_file(c, ec)) return c.string();
    tried.push_back(fmt::format("{} ({})", place.what, place.dir.string()));
  }
  throw ConfigError(
      fmt::format("{}: config file not found in {}; give the path of a YAML file", arg, fmt::join(tried, ", nor in ")));
}

}  // namespace ingot::cli
