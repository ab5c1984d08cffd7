// Absolute build paths of the loader test fixtures, from compile definitions (see CMakeLists.txt).
#include "fixture_paths.h"

namespace ingot::test {

std::string fixture_plugin_dir() { return INGOT_FIXTURE_PLUGIN_DIR; }
std::string fixture_disabled_dir() { return INGOT_FIXTURE_DISABLED_DIR; }
std::string template_plugin_path() { return INGOT_TEMPLATE_PLUGIN; }

}  // namespace ingot::test
