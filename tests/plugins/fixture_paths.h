// Where the loader tests find their fixture plugins. The absolute paths live in one tiny source
// file (fixture_paths.cpp), so the test's main object stays cacheable across clones.
#pragma once

#include <string>

namespace ingot::test {

/// Folder of the good and bad fixture plugins.
std::string fixture_plugin_dir();
/// Folder holding only libfixture_disabled.so (the INGOT_DISABLE_PLUGINS test).
std::string fixture_disabled_dir();
/// The example template plugin as built in this tree.
std::string template_plugin_path();

}  // namespace ingot::test
