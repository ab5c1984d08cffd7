// PluginLoader: discovery (build, install, INGOT_PLUGIN_PATH), the kill switch, and the
// load -> query -> ABI check -> probe -> init -> register sequence with one reason per failure.
#include "ingot/runtime/plugin_loader.h"

#include <boost/dll/shared_library.hpp>
#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "ingot/base/error.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/logging.h"
#include "ingot/runtime/registry.h"
#include "runtime/host_api.h"

namespace fs = std::filesystem;

namespace ingot {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}


// Boost.DLL's message is "...load() failed (dlerror system message: TEXT): ec"; keep TEXT.
std::string dlerror_text(const std::exception& e) {
  const std::string what = e.what();
  const std::string tag = "(dlerror system message: ";
  const auto start = what.find(tag);
  if (start == std::string::npos) return what;
  const auto from = start + tag.size();
  const auto end = what.rfind("): ");
  return end == std::string::npos || end < from ? what.substr(from) : what.substr(from, end - from);
}

// Libraries stay loaded for the life of the process: backend tables point into them.
std::vector<boost::dll::shared_library>& kept_libraries() {
  static auto* libs = new std::vector<boost::dll::shared_library>();
  return *libs;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Adds a started plugin's components to the registries; a malformed one is skipped with a warning.
void register_components(const ingot_plugin_components& comps, PluginRecord& rec) {
  BackendRegistry& backends = BackendRegistry::instance();
  for (int32_t i = 0; i < comps.n_components; ++i) {
    const ingot_component* c = comps.components == nullptr ? nullptr : &comps.components[i];
    if (c == nullptr || c->struct_size < sizeof(ingot_component) || c->table == nullptr) {
      log_warn("plugin {}: component #{} is malformed; skipped", rec.name, i);
      continue;
    }
    try {
      if (c->kind == INGOT_COMPONENT_BACKEND) {
        const auto* b = static_cast<const ingot_backend*>(c->table);
        if (b->name != nullptr && backends.find(b->name) != nullptr) {
          log_warn("plugin {}: a backend named '{}' already exists; skipped", rec.name, b->name);
          continue;
        }
        rec.backends.emplace_back(backends.add(b, rec.name).name());
      } else if (c->kind == INGOT_COMPONENT_COMMUNICATOR) {
        const auto* t = static_cast<const ingot_communicator*>(c->table);
        rec.communicators.emplace_back(CommunicatorRegistry::instance().add(t, rec.name).name);
      } else {
        log_warn("plugin {}: component #{} has unknown kind {}; skipped", rec.name, i, c->kind);
      }
    } catch (const Error& e) {
      log_warn("{}; skipped", e.what());
    }
  }
}

// query -> ABI check -> duplicate check -> probe -> init -> register; fills `rec`. `earlier` are
// the records of plugins loaded before (the first plugin of a name wins).
void start_plugin(const boost::dll::shared_library& lib, const std::deque<PluginRecord>& earlier, PluginRecord& rec) {
  for (const char* sym : {INGOT_PLUGIN_QUERY_SYMBOL, INGOT_PLUGIN_PROBE_SYMBOL, INGOT_PLUGIN_INIT_SYMBOL}) {
    if (!lib.has(sym)) {
      rec.reason = fmt::format("not an Ingot plugin: no {}", sym);
      return;
    }
  }
  auto& query = lib.get<void(ingot_plugin_info*)>(INGOT_PLUGIN_QUERY_SYMBOL);
  auto& probe = lib.get<int(char*, size_t)>(INGOT_PLUGIN_PROBE_SYMBOL);
  auto& init = lib.get<ingot_status*(const ingot_host_api*, ingot_plugin_components*)>(INGOT_PLUGIN_INIT_SYMBOL);

  ingot_plugin_info info{};
  info.struct_size = sizeof(info);
  info.abi_minor = INGOT_ABI_MINOR;
  query(&info);
  if (info.abi_major != INGOT_ABI_MAJOR) {
    rec.reason = fmt::format("built for ABI {}.x, this Ingot has ABI {}.x: rebuild the plugin against this SDK",
                             info.abi_major, INGOT_ABI_MAJOR);
    return;
  }
  if (info.name == nullptr || *info.name == '\0') {
    rec.reason = "plugin query returned no name";
    return;
  }
  rec.name = info.name;
  rec.version = info.version == nullptr ? "" : info.version;
  rec.description = info.description == nullptr ? "" : info.description;
  rec.kinds = info.kinds;
  if (contains(PluginLoader::disabled_names(), rec.name)) {
    rec.reason = "disabled by INGOT_DISABLE_PLUGINS";
    return;
  }
  for (const PluginRecord& other : earlier) {
    if (other.name == rec.name && other.available) {
      rec.reason = fmt::format("duplicate of {}", other.path);
      return;
    }
  }

  char why[1024] = {0};
  if (probe(why, sizeof(why)) == 0) {
    why[sizeof(why) - 1] = '\0';
    rec.reason = why[0] != '\0' ? why : "probe failed without a reason";
    return;
  }

  ingot_plugin_components comps{};
  comps.struct_size = sizeof(comps);
  comps.abi_minor = INGOT_ABI_MINOR;
  if (ingot_status* st = init(&host_api(), &comps); st != nullptr) {
    rec.reason = fmt::format("init failed: {}", st->message != nullptr ? st->message : "no message");
    if (st->release != nullptr) st->release(st);
    return;
  }

  register_components(comps, rec);
  rec.available = true;
}

}  // namespace

// "libingot_cuda.so" -> "cuda"; "libfoo.so" -> "foo".
std::string plugin_file_stem(const std::string& path) {
  std::string s = fs::path(path).filename().string();
  if (s.rfind("lib", 0) == 0) s = s.substr(3);
  if (const auto dot = s.find(".so"); dot != std::string::npos) s = s.substr(0, dot);
  if (s.rfind("ingot_", 0) == 0) s = s.substr(6);
  return s;
}

PluginLoader& PluginLoader::instance() {
  static PluginLoader loader;
  return loader;
}

std::vector<std::string> PluginLoader::disabled_names() { return split(env_or_empty("INGOT_DISABLE_PLUGINS"), ','); }

std::vector<PluginFolder> PluginLoader::default_folders() {
  std::vector<PluginFolder> out;
  // The folder this libingot was loaded from: the build's lib folder, or <prefix>/lib once installed,
  // wherever the prefix has been put. Only the build's own libingot searches the build's plugins,
  // so an installed copy never picks up plugins from a build tree that happens to still exist.
  fs::path lib_dir;
  if (Dl_info info{}; dladdr(reinterpret_cast<const void*>(&PluginLoader::default_folders), &info) != 0 &&
                      info.dli_fname != nullptr) {
    lib_dir = fs::absolute(fs::path(info.dli_fname)).lexically_normal().parent_path();
  }
  std::error_code same_ec;
  if (lib_dir.empty() || fs::equivalent(lib_dir, INGOT_LIB_BUILD_DIR, same_ec)) {
    out.push_back({INGOT_PLUGIN_BUILD_DIR, "build", false});
  }
  if (const std::string b = env_or_empty("INGOT_BUILD_DIR"); !b.empty()) out.push_back({b + "/plugins", "INGOT_BUILD_DIR", false});
  if (!lib_dir.empty()) out.push_back({(lib_dir / "ingot" / "plugins").string(), "install", false});
  for (const std::string& dir : split(env_or_empty("INGOT_PLUGIN_PATH"), ':')) out.push_back({dir, "INGOT_PLUGIN_PATH", false});
  for (auto& f : out) {
    std::error_code ec;
    f.exists = fs::is_directory(f.path, ec);
  }
  return out;
}

void PluginLoader::load_all() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (loaded_all_) return;
  loaded_all_ = true;
  for (const PluginFolder& f : default_folders()) scan_folder(f);
}

void PluginLoader::load_folder(const std::string& dir) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::error_code ec;
  scan_folder({dir, "test", fs::is_directory(dir, ec)});
}

void PluginLoader::scan_folder(const PluginFolder& folder) {
  // The same folder reached twice (INGOT_BUILD_DIR = the build folder) is scanned once.
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(folder.path, ec);
  for (const PluginFolder& seen : folders_) {
    std::error_code ec2;
    if (fs::weakly_canonical(seen.path, ec2) == canon && !ec && !ec2) return;
  }
  folders_.push_back(folder);
  if (!folder.exists) {
    log_debug("plugin folder {} ({}) does not exist", folder.path, folder.source);
    return;
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder.path, ec)) {
    const std::string fname = entry.path().filename().string();
    // Regular files only: dlopen of a FIFO or a device named *.so would block or fail obscurely.
    if (fname.rfind("lib", 0) == 0 && fname.size() > 3 && fname.ends_with(".so") && entry.is_regular_file(ec)) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());  // a stable order: "first wins" must not depend on the file system
  for (const std::string& f : files) load_file(f);
}

PluginRecord PluginLoader::load_file(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (const PluginRecord& r : records_) {
    if (r.path == path) return r;
  }
  records_.push_back(load_record(path));
  const PluginRecord& r = records_.back();
  if (r.available) {
    log_debug("plugin {} {} loaded from {}", r.name, r.version, r.path);
  } else {
    log_info("plugin {} unavailable: {}", r.name, r.reason);
  }
  return r;
}

PluginRecord PluginLoader::load_record(const std::string& path) {
  PluginRecord rec;
  rec.path = path;
  rec.name = plugin_file_stem(path);
  const std::vector<std::string> disabled = disabled_names();
  // Check the file name before loading, so the kill switch also covers a library that crashes when loaded.
  if (contains(disabled, rec.name)) {
    rec.reason = "disabled by INGOT_DISABLE_PLUGINS";
    return rec;
  }

  boost::dll::shared_library lib;
  try {
    lib = boost::dll::shared_library(fs::path(path), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    rec.reason = dlerror_text(e);
    return rec;
  }
  kept_libraries().push_back(lib);  // never unloaded, even when rejected: it may have started threads
  // The entry points are noexcept by contract; a plugin that breaks it is rejected, not fatal.
  try {
    start_plugin(lib, records_, rec);
  } catch (const std::exception& e) {
    rec.available = false;
    rec.reason = fmt::format("the plugin threw across the C ABI: {}", e.what());
  } catch (...) {
    rec.available = false;
    rec.reason = "the plugin threw across the C ABI";
  }
  return rec;
}

const PluginRecord* PluginLoader::find(const std::string& name) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const PluginRecord* first = nullptr;
  for (const PluginRecord& r : records_) {
    if (r.name != name) continue;
    if (r.available) return &r;
    if (first == nullptr) first = &r;
  }
  return first;
}

std::vector<std::string> PluginLoader::searched_folders() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::vector<std::string> out;
  for (const PluginFolder& f : folders_) out.push_back(f.path);
  return out;
}

}  // namespace ingot
