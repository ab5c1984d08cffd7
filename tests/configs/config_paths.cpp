// Absolute source paths of the config tests, from compile definitions (see CMakeLists.txt).
#include "config_paths.h"

namespace ingot::test {

std::string config_test_dir() { return INGOT_CONFIG_TEST_DIR; }
std::string source_dir() { return INGOT_SOURCE_DIR; }

}  // namespace ingot::test
