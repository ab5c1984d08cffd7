// ExtensionLoader: load -> query -> version and ABI check -> register, one reason per failure.
// Extension folders sit beside the kernel plugin folders ("extensions" next to "plugins").
#include "ingot/extension/extension_loader.h"

#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "ingot/extension/extension.h"
#include "ingot/runtime/logging.h"
#include "ingot/runtime/plugin_loader.h"

namespace fs = std::filesystem;

namespace ingot {
namespace {

std::vector<std::string> split_path(const char* text) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::string cur;
  for (const char* p = text;; ++p) {
    if (*p == ':' || *p == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur.push_back(*p);
    }
  }
  return out;
}

/// "kind type" for every type of every registry (to tell what an extension added).
std::set<std::string> all_types() {
  const Registry r = Registry::process();
  std::set<std::string> out;
  const auto add = [&out](const auto& reg) {
    for (const std::string& t : reg.types()) out.insert(reg.what() + " " + t);
  };
  add(r.layers);
  add(r.losses);
  add(r.optimizers);
  add(r.schedules);
  add(r.stages);
  add(r.callbacks);
  add(r.datasets);
  return out;
}

/// Sets config::registering_origin() for its lifetime.
class OriginGuard {
 public:
  explicit OriginGuard(const std::string& origin) : prev_(config::registering_origin()) {
    config::registering_origin() = origin;
  }
  ~OriginGuard() { config::registering_origin() = prev_; }
  OriginGuard(const OriginGuard&) = delete;
  OriginGuard& operator=(const OriginGuard&) = delete;

 private:
  std::string prev_;
};

}  // namespace

ExtensionLoader& ExtensionLoader::instance() {
  static auto* loader = new ExtensionLoader();  // never destroyed: extensions are never unloaded
  return *loader;
}

std::vector<std::string> ExtensionLoader::default_folders() {
  std::vector<std::string> out;
  for (const PluginFolder& f : PluginLoader::default_folders())
    if (f.source != "INGOT_PLUGIN_PATH") out.push_back((fs::path(f.path).parent_path() / "extensions").string());
  for (const std::string& dir : split_path(std::getenv("INGOT_EXTENSION_PATH"))) out.push_back(dir);
  return out;
}

void ExtensionLoader::load_all() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (loaded_all_) return;
  loaded_all_ = true;
  std::set<fs::path> seen;
  for (const std::string& dir : default_folders()) {
    std::error_code ec;
    const fs::path canon = fs::weakly_canonical(dir, ec);
    if (!seen.insert(ec ? fs::path(dir) : canon).second) continue;
    load_folder(dir);
  }
}

void ExtensionLoader::load_folder(const std::string& dir) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // Regular files only: dlopen of a FIFO or device would block or fail obscurely.
    if (name.rfind("lib", 0) == 0 && name.ends_with(".so") && entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) load_file(f);
}

ExtensionRecord ExtensionLoader::load_file(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ExtensionRecord rec = load_record(path);
  if (!rec.available) log_warn("extension {}: {}", rec.path, rec.reason);
  records_.push_back(rec);
  return rec;
}

ExtensionRecord ExtensionLoader::load_record(const std::string& path) {
  ExtensionRecord rec;
  rec.path = path;
  rec.name = plugin_file_stem(path);
  const std::vector<std::string> disabled = PluginLoader::disabled_names();
  if (std::find(disabled.begin(), disabled.end(), rec.name) != disabled.end()) {
    rec.reason = "disabled by INGOT_DISABLE_PLUGINS";
    return rec;
  }
  // Kept loaded for the process: registered factories point into the library.
  static std::vector<boost::dll::shared_library> libraries;
  boost::dll::shared_library lib;
  try {
    lib.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    rec.reason = fmt::format("cannot be loaded: {}", e.what());
    return rec;
  }
  if (!lib.has(INGOT_EXTENSION_QUERY_SYMBOL) || !lib.has(INGOT_EXTENSION_REGISTER_SYMBOL)) {
    rec.reason = fmt::format("not an extension plugin (no {} / {}); kernel plugins belong in the plugin folder",
                             INGOT_EXTENSION_QUERY_SYMBOL, INGOT_EXTENSION_REGISTER_SYMBOL);
    return rec;
  }
  ingot_extension_info info{};
  lib.get<void(ingot_extension_info*)>(INGOT_EXTENSION_QUERY_SYMBOL)(&info);
  if (info.name != nullptr) rec.name = info.name;
  if (info.version != nullptr) rec.version = info.version;
  if (info.description != nullptr) rec.description = info.description;
  const std::string core = info.core_version != nullptr ? info.core_version : "?";
  const std::string abi = info.cxx_abi != nullptr ? info.cxx_abi : "?";
  if (core != INGOT_VERSION_STRING) {
    rec.reason = fmt::format("built against Ingot {}, this is Ingot {}: rebuild it against this installation",
                             core, INGOT_VERSION_STRING);
    return rec;
  }
  if (abi != INGOT_CXX_ABI_TAG) {
    rec.reason = fmt::format("built with C++ ABI '{}', Ingot uses '{}': rebuild it with the same compiler family",
                             abi, INGOT_CXX_ABI_TAG);
    return rec;
  }
  for (const ExtensionRecord& r : records_)
    if (r.available && r.name == rec.name) {
      rec.reason = fmt::format("duplicate of {} (already loaded)", r.path);
      return rec;
    }
  const std::set<std::string> before = all_types();
  try {
    OriginGuard origin(rec.name);
    Registry registry = Registry::process();
    lib.get<void(Registry&)>(INGOT_EXTENSION_REGISTER_SYMBOL)(registry);
  } catch (const std::exception& e) {
    rec.reason = fmt::format("registration failed: {}", e.what());
    return rec;
  }
  for (const std::string& t : all_types())
    if (!before.count(t)) rec.added.push_back(t);
  rec.available = true;
  libraries.push_back(std::move(lib));
  return rec;
}

}  // namespace ingot
