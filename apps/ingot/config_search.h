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
  std::string what;  ///< "the working directory", "the installed configs", "the source tree"
};

/// The places, in order: the working directory; <prefix>/share/ingot beside an installed `ingot`
/// (found relative to the executable, so a moved prefix still works); and, for the build tree's
/// own binary, the source tree it was built from.
std::vector<ConfigPlace> config_places();

/// `arg` as given when it is absolute or exists; else the first place where `arg` exists (a bare
/// file name is also tried under the place's configs/). ConfigError "ARG: config file not found:
/// ..." naming each place tried otherwise.
std::string find_config_file(const std::string& arg);

}  // namespace ingot::cli
