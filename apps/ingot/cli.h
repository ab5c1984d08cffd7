// The CLI's commands and the interrupt flag they poll; main.cpp parses and dispatches.
#pragma once

#include <string>
#include <vector>

namespace ingot::cli {

/// `ingot plugins [--verbose]`
int cmd_plugins(const std::vector<std::string>& args);
/// `ingot doctor`
int cmd_doctor(const std::vector<std::string>& args);
/// `ingot predict RUN INPUT...`
int cmd_predict(const std::vector<std::string>& args);
/// `ingot generate RUN --prompt TEXT [...]`
int cmd_generate(const std::vector<std::string>& args);
/// `ingot tokenize CORPUS -o DIR [...]`
int cmd_tokenize(const std::vector<std::string>& args);
/// `ingot pack FOLDER -o DIR [...]`
int cmd_pack(const std::vector<std::string>& args);
/// `ingot export RUN --format onnx -o FILE`
int cmd_export(const std::vector<std::string>& args);
/// `ingot report RUN [RUN...] [-o FILE.html]`
int cmd_report(const std::vector<std::string>& args);
/// `ingot run CONFIG.yaml`
int cmd_run(const std::vector<std::string>& args);
/// `ingot bench CONFIG.yaml [--json] [--profile[=DIR]] ...`
int cmd_bench(const std::vector<std::string>& args);
/// `ingot launch [options] run CONFIG.yaml ...` or `ingot launch [options] -- COMMAND ...`
int cmd_launch(const std::vector<std::string>& args);

/// Removes every bare `flag` from `args` (an option whose value is optional, like --profile[=DIR]:
/// left in, the parser would take the next argument as its value); true when there was one.
inline bool take_bare_flag(std::vector<std::string>& args, const std::string& flag) {
  return std::erase(args, flag) > 0;
}

/// This program's own path, for the ranks a launch starts.
std::string self_executable();

/// True once SIGINT, SIGTERM or SIGHUP arrived; long work checks it between steps.
bool interrupted();

}  // namespace ingot::cli
