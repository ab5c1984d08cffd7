// ExtensionLoader: finds extension plugins (the build's and the install's extension folder, then
// INGOT_EXTENSION_PATH), checks each one's core version and C++ ABI tag, and lets it register its
// types. A file that fails is recorded with the reason, never a crash. INGOT_DISABLE_PLUGINS
// names extensions to skip as well.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace ingot {

struct ExtensionRecord {
  std::string path;
  std::string name;  ///< from its query; the file's stem when that was never reached
  std::string version;
  std::string description;
  bool available = false;
  std::string reason;               ///< why not available
  std::vector<std::string> added;   ///< "loss huber", "stage param_report", ...
};

class ExtensionLoader {
 public:
  static ExtensionLoader& instance();

  /// Loads every extension of the default folders; the first call does the work.
  void load_all();
  /// Loads the lib*.so files of one folder; a missing folder is skipped.
  void load_folder(const std::string& dir);
  /// Loads one file as an extension and returns its record (also kept in records()).
  ExtensionRecord load_file(const std::string& path);

  const std::deque<ExtensionRecord>& records() const { return records_; }
  /// Folders load_all searches, in order: the build folder (INGOT_BUILD_DIR/extensions), the
  /// install folder (lib/ingot/extensions beside the core library), INGOT_EXTENSION_PATH.
  static std::vector<std::string> default_folders();

 private:
  ExtensionLoader() = default;
  ExtensionRecord load_record(const std::string& path);

  std::recursive_mutex mu_;
  bool loaded_all_ = false;
  std::deque<ExtensionRecord> records_;
};

}  // namespace ingot
