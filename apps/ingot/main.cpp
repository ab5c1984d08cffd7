// `ingot` entry point: global options, command dispatch, signals, and the mapping of errors to
// one line "ingot: error: ..." and the exit codes of docs/architecture.md.
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <set>
#include <string>
#include <string_view>

#include "cli.h"
#include "malloc_policy.h"
#include "ingot/base/error.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/runtime/logging.h"
#include "ingot/train/interrupt.h"

namespace po = boost::program_options;

namespace {

/// How long a first signal may wait for a safe point outside the stages (docs/architecture.md).
constexpr std::chrono::seconds kInterruptGrace{10};

constexpr const char* kUsage =
    "usage: ingot [--version] [--help] [--log LEVEL] <command> [<args>]\n"
    "\n"
    "commands:\n"
    "  plugins [--verbose]   list plugins, their status and why a plugin is unavailable\n"
    "  doctor                what this machine offers (CPU extensions, threads, plugins, devices,\n"
    "                        datasets) and what to install for what is missing\n"
    "  run CONFIG.yaml [KEY=VALUE ...]  validate a pipeline config, select backends and run it\n"
    "                        ('ingot run --help': its options)\n"
    "                        (--profile[=DIR]: per-op time table and Chrome trace)\n"
    "                        (--memory-report: peak memory per stage, largest tensors at the peak)\n"
    "  predict RUN INPUT...  class, probability and top k of a run's model on images, folders of images,\n"
    "                        CSV, .npy / .npz or IDX files\n"
    "                        ([-o FILE.csv] [--top-k K] [--batch N] [--set KEY=VALUE])\n"
    "  generate RUN --prompt TEXT  continue the text with a run's language model (KV cache)\n"
    "                        ([--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S])\n"
    "  tokenize CORPUS -o DIR  a text corpus to llm.c token shards for the tokens dataset\n"
    "                        ([--tokenizer byte | --sentencepiece-vocab N] [--shard-tokens N] [--test-fraction F])\n"
    "  pack FOLDER -o DIR    one split of an image folder to packed shards that data.image_folder reads\n"
    "                        memory-mapped ([--shard-mb N] [--force])\n"
    "  export RUN --format onnx -o FILE  write a run's trained model as an ONNX file\n"
    "                        ([--set KEY=VALUE]; docs/export.md)\n"
    "  report RUN [RUN...]   a self-contained HTML page of a run's curves and tables, or of several\n"
    "                        runs compared ([-o FILE.html]; docs/report.md)\n"
    "  bench CONFIG.yaml     time training steps, inference and batch-1 latency of the config's model\n"
    "                        on in-memory data ([--json] [--profile[=DIR]] [--steps N] [--set KEY=VALUE] ...)\n"
    "  launch --nproc-per-node N run CONFIG.yaml\n"
    "                        start the ranks of a distributed run on this machine and wait for them\n"
    "                        (or `launch [options] -- COMMAND ...`; see 'ingot launch --help')\n"
    "\n"
    "environment: INGOT_PLUGIN_PATH (extra plugin folders, ':'-separated),\n"
    "  INGOT_DISABLE_PLUGINS (names to skip, ','-separated), INGOT_LOG (debug|info|warn|error|off)\n"
    "exit codes: 0 ok, 1 runtime error, 2 usage or config error, 3 required backend missing,\n"
    "  130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP\n";

// The index of argv's command when it is `name` (only global options before it), else 0.
int command_at(int argc, char** argv, std::string_view name) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--log") {
      ++i;
    } else if (!a.starts_with("-")) {
      return a == name ? i : 0;
    }
  }
  return 0;
}

int run_main(int argc, char** argv) {
  // `launch` gets the rest of the line as it is: its ranks' command may carry options of its own
  // (--help, --log, --) that are not the launcher's global options.
  const int launch_at = command_at(argc, argv, "launch");
  po::options_description global("global options");
  global.add_options()("help,h", "show this help")("version", "show the version and plugin ABI")(
      "log", po::value<std::string>(), "log level: debug, info, warn, error, off")(
      "command", po::value<std::string>(), "command")("args", po::value<std::vector<std::string>>(), "arguments");
  po::positional_options_description pos;
  pos.add("command", 1).add("args", -1);

  po::variables_map vm;
  po::parsed_options parsed = po::command_line_parser(launch_at > 0 ? launch_at : argc, argv)
                                  .options(global)
                                  .positional(pos)
                                  .allow_unregistered()
                                  .run();
  po::store(parsed, vm);
  po::notify(vm);

  if (vm.count("log")) {
    const auto level = ingot::parse_log_level(vm["log"].as<std::string>());
    if (!level) throw ingot::ConfigError(fmt::format("--log {}: expected debug, info, warn, error or off", vm["log"].as<std::string>()));
    ingot::set_log_level(*level);
  }
  if (vm.count("version")) {
    std::cout << fmt::format("ingot {} (plugin ABI {}.{})\n", INGOT_VERSION, INGOT_ABI_MAJOR, INGOT_ABI_MINOR);
    return 0;
  }
  if (launch_at > 0) return ingot::cli::cmd_launch(std::vector<std::string>(argv + launch_at + 1, argv + argc));
  // `ingot COMMAND --help` is the command's own help (the commands with options have one); `ingot
  // --help` the global one.
  static const std::set<std::string> own_help{"run", "predict", "generate", "tokenize", "pack", "export", "report"};
  if (vm.count("help")) {
    if (vm.count("command") && own_help.contains(vm["command"].as<std::string>())) {
      const std::string& command = vm["command"].as<std::string>();
      if (command == "run") return ingot::cli::cmd_run({"--help"});
      if (command == "predict") return ingot::cli::cmd_predict({"--help"});
      if (command == "export") return ingot::cli::cmd_export({"--help"});
      if (command == "generate") return ingot::cli::cmd_generate({"--help"});
      if (command == "tokenize") return ingot::cli::cmd_tokenize({"--help"});
      if (command == "pack") return ingot::cli::cmd_pack({"--help"});
      return ingot::cli::cmd_report({"--help"});
    }
    std::cout << kUsage;
    return 0;
  }
  if (!vm.count("command")) throw ingot::ConfigError("no command given; 'ingot --help' lists the commands");
  // Everything after the command (its own options included) goes to the command.
  const std::string command = vm["command"].as<std::string>();
  std::vector<std::string> rest = po::collect_unrecognized(parsed.options, po::include_positional);
  rest.erase(std::find(rest.begin(), rest.end(), command));  // the command itself
  if (command == "plugins") return ingot::cli::cmd_plugins(rest);
  if (command == "run") return ingot::cli::cmd_run(rest);
  if (command == "bench") return ingot::cli::cmd_bench(rest);
  if (command == "doctor") return ingot::cli::cmd_doctor(rest);
  if (command == "predict") return ingot::cli::cmd_predict(rest);
  if (command == "report") return ingot::cli::cmd_report(rest);
  if (command == "export") return ingot::cli::cmd_export(rest);
  if (command == "generate") return ingot::cli::cmd_generate(rest);
  if (command == "tokenize") return ingot::cli::cmd_tokenize(rest);
  if (command == "pack") return ingot::cli::cmd_pack(rest);
  throw ingot::ConfigError(fmt::format("unknown command '{}'; 'ingot --help' lists the commands", command));
}

}  // namespace

namespace ingot::cli {
bool interrupted() { return ingot::train::interrupted(); }
}  // namespace ingot::cli

int main(int argc, char** argv) {
  ingot::cli::tune_malloc();
  // One interrupt system for the whole process: the first SIGINT / SIGTERM / SIGHUP sets a flag
  // that every phase checks (start-up, training steps, the stages after training); a second one
  // stops the process at once. Outside the pipeline's stages, which poll, a first signal that is
  // not acted on within the grace period (a start-up blocked in a read, say) ends the process too.
  const ingot::train::InterruptGuard guard("ingot: stopping at the next safe point (press Ctrl-C again to stop now)\n",
                                           kInterruptGrace);
  int code = 1;
  try {
    code = run_main(argc, argv);
  } catch (const ingot::Error& e) {
    std::cerr << "ingot: error: " << e.what() << "\n";
    code = static_cast<int>(e.exit_code());
  } catch (const po::error& e) {
    std::cerr << "ingot: error: " << e.what() << " (see 'ingot --help')\n";
    code = 2;
  } catch (const std::exception& e) {
    std::cerr << "ingot: error: " << e.what() << "\n";
    code = 1;
  }
  if (ingot::train::interrupted()) {
    std::cerr << "ingot: interrupted\n";
    return static_cast<int>(ingot::train::exit_code_for_signal(ingot::train::signal_number()));
  }
  return code;
}
