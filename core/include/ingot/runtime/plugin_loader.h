// PluginLoader: finds plugin shared libraries, loads them with Boost.DLL, checks query/probe/init
// and registers their components (backends, communicators). A plugin that fails is recorded with
// the reason, never a crash.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace ingot {

/// One candidate file, accepted or rejected, and why.
struct PluginRecord {
  std::string path;
  std::string name;         ///< from query; the file's stem when query was never reached
  std::string version;
  std::string description;
  uint32_t kinds = 0;       ///< INGOT_KIND_* bits
  bool available = false;   ///< loaded, probed, initialised and registered
  std::string reason;       ///< why not available ("" when available)
  std::vector<std::string> backends;       ///< names of the backends it registered
  std::vector<std::string> communicators;  ///< names of the communicators it registered
};

/// A folder searched for plugins and where it came from.
struct PluginFolder {
  std::string path;
  std::string source;  ///< "build", "INGOT_BUILD_DIR", "install", "INGOT_PLUGIN_PATH", "test"
  bool exists = false;
};

/// A plugin file's name without "lib", "ingot_" and ".so": "libingot_cuda.so" -> "cuda".
std::string plugin_file_stem(const std::string& path);

class PluginLoader {
 public:
  /// The process's loader (plugins live as long as the process).
  static PluginLoader& instance();

  /// Loads every plugin of the build folder, the install folder, then INGOT_PLUGIN_PATH;
  /// the first call does the work, later calls return at once.
  void load_all();
  /// Loads the lib*.so files of one folder (tests, extra folders); a missing folder is skipped.
  void load_folder(const std::string& dir);
  /// Loads one file as a plugin and returns its record (also kept in records()).
  PluginRecord load_file(const std::string& path);

  /// Every candidate file in load order; a deque, so records (and find's pointers) never move.
  const std::deque<PluginRecord>& records() const { return records_; }
  /// The record of plugin `name` (the available one when several share it), or nullptr.
  const PluginRecord* find(const std::string& name) const;
  /// Folders in search order (the ones load_all would use, plus any given to load_folder).
  std::vector<std::string> searched_folders() const;
  const std::vector<PluginFolder>& folders() const { return folders_; }

  /// Folders load_all searches, in order, from compile definitions and the environment.
  static std::vector<PluginFolder> default_folders();
  /// Names listed in INGOT_DISABLE_PLUGINS.
  static std::vector<std::string> disabled_names();

 private:
  PluginLoader() = default;
  void scan_folder(const PluginFolder& folder);
  PluginRecord load_record(const std::string& path);

  mutable std::recursive_mutex mu_;
  bool loaded_all_ = false;
  std::deque<PluginRecord> records_;
  std::vector<PluginFolder> folders_;
};

}  // namespace ingot
