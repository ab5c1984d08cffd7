// Where `ingot run` and `ingot bench` find the config named on the command line: the working
// directory first, then the configs shipped with Ingot (installed, or the build's source tree).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ingot::cli {

/// A folder a relative config path is tried in, and how messages name it.
struct ConfigPlace {
  std::filesystem::path dir;
  std::string what;      ///< "the working directory", "the installed configs", "the source tree"
  bool shipped = false;  ///< holds Ingot's configs/ (a bare file name is also tried in there)
};

/// The places, in order: the working directory; then, for the build tree's own binary, the source
/// tree it was built from, else <prefix>/share/ingot of the installed `ingot` (found relative to
/// the executable, so a moved prefix still works).
std::vector<ConfigPlace> config_places();

/// `arg` as given when it is absolute or exists; else the first place where `arg` exists (a bare
/// file name is also tried under a shipped place's configs/). ConfigError "ARG: config file not
/// found in ..." naming each place tried otherwise.
std::string find_config_file(const std::string& arg);

}  // namespace ingot::cli
