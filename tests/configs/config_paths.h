// Where the config tests find their YAML files. The absolute paths live in one tiny source file
// (config_paths.cpp), so the test's main object stays cacheable across clones.
#pragma once

#include <string>

namespace ingot::test {

/// tests/configs in the source tree.
std::string config_test_dir();
/// The source tree's root (for configs/*.yaml).
std::string source_dir();

}  // namespace ingot::test
