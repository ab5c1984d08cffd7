// `ingot run CONFIG.yaml`: load and validate the config, apply threads and backend selection,
// then run the pipeline (data, model, train, stages) or, for a config without one, the smoke ops.
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include <iostream>
#include <ostream>
#include <sstream>
#include <streambuf>

#include "cli.h"
#include "config_search.h"
#include "ingot/base/error.h"
#include "ingot/config/backend_select.h"
#include "ingot/config/config.h"
#include "ingot/config/overrides.h"
#include "ingot/config/yaml_text.h"
#include "ingot/extension/extension_loader.h"
#include "ingot/ops/random.h"
#include "ingot/parallel/dist_env.h"
#include "ingot/parallel/launcher.h"
#include "ingot/parallel/parallel_config.h"
#include "ingot/runtime/profiler.h"
#include "ingot/runtime/registry.h"
#include "ingot/runtime/threads.h"
#include "ingot/train/config_defaults.h"
#include "ingot/train/pipeline.h"
#include "ingot/train/pipeline_schema.h"
#include "smoke.h"

namespace po = boost::program_options;

namespace ingot::cli {

namespace {

/// `args` without --devices and its value.
std::vector<std::string> without_devices(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--devices") {
      ++i;
      continue;
    }
    if (!args[i].starts_with("--devices=")) out.push_back(args[i]);
  }
  return out;
}

/// parallel.devices or --devices: when it means more than one rank and this process is not a rank
/// already, starts the ranks as `ingot launch --nproc-per-node N run ...` would (data parallel)
/// and returns their exit code; else nothing (this process runs the pipeline itself).
std::optional<int> run_on_devices(const config::Config& cfg, const config::BackendSelection& sel,
                                  const std::string& flag, const std::vector<std::string>& args) {
  if (parallel::dist_env_from_environment()) return std::nullopt;
  const parallel::ParallelConfig pc = parallel::parse_parallel_config(cfg.node("parallel"), cfg.file());
  const std::string devices = flag.empty() ? pc.devices : flag;
  if (devices.empty()) return std::nullopt;
  const int visible = sel.device.is_cpu() ? 1 : BackendRegistry::instance().device_backend(sel.device).device_count();
  const int ranks = parallel::rank_count(devices, visible, flag.empty() ? cfg.where("parallel.devices") : "--devices");
  const std::string what = sel.device.is_cpu() ? "CPU ranks" : "ranks, one per device,";
  if (ranks == 1) {
    std::cout << fmt::format("devices {}: one {}, one process\n", devices, sel.device.is_cpu() ? "CPU" : "device");
    return std::nullopt;
  }
  if (pc.mode == "pipeline")
    throw ConfigError(
        fmt::format("{}: --devices starts data-parallel ranks; a pipeline-parallel run is started with "
                    "ingot launch --nproc-per-node N run ...",
                    cfg.where("parallel.mode")));
  std::vector<std::string> argv{self_executable(), "run"};
  for (const std::string& a : without_devices(args)) argv.push_back(a);
  if (pc.mode == "none") argv.insert(argv.end(), {"--set", "parallel.mode=ddp"});
  std::cout << fmt::format(
                   "devices {}: starting {} {} (data parallel), as ingot launch --nproc-per-node {} run would\n",
                   devices, ranks, what, ranks)
            << std::flush;
  parallel::LaunchOptions o;
  o.nproc_per_node = ranks;
  return parallel::launch(o, argv).exit_code;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("ingot run");
  opts.add_options()("config", po::value<std::string>(), "pipeline config (YAML)")(
      "resume", po::bool_switch(), "continue runs/<name>/ from its latest checkpoint")(
      "force", po::bool_switch(), "start over: move an existing runs/<name>/ aside")(
      "keep-old", po::value<int64_t>()->default_value(2),
      "with --force: how many moved-aside copies (<name>.old-*) to keep, the newest (0 = all)")(
      "runs-dir", po::value<std::string>()->default_value("runs"), "folder of the run folders")(
      "profile", po::value<std::string>(), "write profile.txt and trace.json to DIR (default: the run folder)")(
      "dump-graph", po::value<std::string>(),
      "compile the training step (train.compile) and write its graphs before and after each pass into DIR")(
      "memory-report", po::bool_switch(),
      "at the end, print each stage's peak memory and the largest tensors at the peak (also runs/<name>/memory.md)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a config key: --set train.epochs=3 (or KEY=VALUE after the config; list elements by "
      "index: model.layers.0.out=64)")(
      "devices", po::value<std::string>(),
      "start the data-parallel ranks here: auto (one per visible GPU; one on a CPU) or N ranks (parallel.devices)")(
      "print-config", po::bool_switch(),
      "print the config with the overrides applied and the defaults of data, model and train, then exit")(
      "help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("assignments", po::value<std::vector<std::string>>(), "KEY=VALUE overrides");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("config", 1).add("assignments", -1);
  po::variables_map vm;
  std::vector<std::string> argv = args;
  const bool profile = take_bare_flag(argv, "--profile");
  po::store(po::command_line_parser(argv).options(all).positional(pos).run(), vm);
  po::notify(vm);
  constexpr const char* kUsage =
      "usage: ingot run CONFIG.yaml [KEY=VALUE ...] [--resume | --force [--keep-old N]] [--runs-dir DIR] "
      "[--profile[=DIR]] [--dump-graph DIR] [--memory-report] [--devices auto|N] [--set KEY=VALUE]... [--print-config]";
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n" << opts
              << "\nA KEY=VALUE after the config is the same as --set KEY=VALUE. Overrides are written into "
                 "runs/<name>/config.resolved.yaml; --resume refuses a run whose overrides changed, except "
                 "train.epochs and train.steps (docs/config.md).\n";
    return 0;
  }
  if (!vm.count("config")) throw ConfigError(kUsage);

  ExtensionLoader::instance().load_all();  // their types may appear in the config
  std::vector<std::string> overrides =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (vm.count("assignments"))
    for (const std::string& a : vm["assignments"].as<std::vector<std::string>>()) {
      if (a.find('=') == std::string::npos)
        throw ConfigError(fmt::format("ingot run: unexpected argument '{}' after the config: overrides are "
                                      "KEY=VALUE (see 'ingot run --help')",
                                      a));
      overrides.push_back(a);
    }
  const std::string config_file = find_config_file(vm["config"].as<std::string>());
  if (vm.count("dump-graph")) {  // train.compile with its dump_graph, whatever form the file gives compile
    std::string dir = vm["dump-graph"].as<std::string>();
    std::string quoted = "'";
    for (char c : dir) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    quoted += "'";
    const config::Config plain = config::load_with_overrides(config_file, overrides, train::pipeline_schema());
    const YAML::Node train = plain.node("train");
    const bool section = train && train.IsMap() && train["compile"] && train["compile"].IsMap();
    overrides.push_back(section ? "train.compile.dump_graph=" + quoted
                                : "train.compile={enabled: true, dump_graph: " + quoted + "}");
  }
  // The overrides become part of the config: config.resolved.yaml records them, and --resume
  // refuses a run whose overrides changed.
  const config::Config cfg = config::load_with_overrides(config_file, overrides, train::pipeline_schema());
  if (vm["print-config"].as<bool>()) {
    std::cout << config::emit_yaml(train::config_with_defaults(cfg)) << "\n";
    return 0;
  }
  if (auto threads = cfg.threads()) set_num_threads(*threads);
  if (auto seed = cfg.seed()) default_generator().manual_seed(static_cast<uint64_t>(*seed));
  const config::BackendSelection sel = config::select_backends(cfg.backend(), cfg.where("backend"));

  if (train::is_pipeline(cfg))
    if (const std::optional<int> code =
            run_on_devices(cfg, sel, vm.count("devices") ? vm["devices"].as<std::string>() : "", args))
      return *code;

  // In a distributed run, rank 0 speaks for all (the others' errors still reach stderr).
  const std::optional<parallel::DistEnv> dist = parallel::dist_env_from_environment();
  const int rank = dist ? dist->rank : 0;
  struct NullBuffer : std::streambuf {
    int overflow(int c) override { return c; }
  } null_buffer;
  std::ostream null_out(&null_buffer);
  std::ostream& out = rank == 0 ? std::cout : null_out;
  std::ostringstream head;  // (a pipeline prints it through the run's console log)
  head << fmt::format("config: {} (name: {})\n", cfg.file(), cfg.name());
  if (!sel.note.empty()) head << sel.note << "\n";
  if (const int cores = usable_cores(); cfg.threads() && *cfg.threads() > cores)
    head << fmt::format(
        "warning: threads: {} is more than the {} cores this process may use; the threads will "
        "contend and run slower: set threads: {} or fewer\n",
        *cfg.threads(), cores, cores);
  head << fmt::format("backend: {} -> {} [{}], {} threads\n", sel.requested, sel.device.str(),
                      fmt::join(sel.enabled, ", "), num_threads());

  if (train::is_pipeline(cfg)) {
    train::RunOptions options;
    options.preamble = head.str();
    options.resume = vm["resume"].as<bool>();
    options.force = vm["force"].as<bool>();
    options.keep_old = vm["keep-old"].as<int64_t>();
    if (options.keep_old < 0)
      throw ConfigError(fmt::format("--keep-old {}: expected 0 (keep all) or more", options.keep_old));
    options.runs_dir = vm["runs-dir"].as<std::string>();
    options.memory_report = vm["memory-report"].as<bool>();
    if (!profile && !vm.count("profile")) return train::run_pipeline(cfg, sel, options, out);
    std::filesystem::path dir =
        vm.count("profile") ? std::filesystem::path(vm["profile"].as<std::string>()) : options.runs_dir / cfg.name();
    if (rank != 0) dir /= fmt::format("rank{}", rank);  // each rank's own trace
    Profiler::instance().start();
    const int code = train::run_pipeline(cfg, sel, options, out);
    save_profile(dir, out);
    return code;
  }
  out << head.str() << std::flush;
  run_smoke(cfg, sel.device, [](const SmokeResult& r) {
    std::cout
        << fmt::format(
               "smoke {:<50} backend {:<12} median {:9.3f} ms  {:8.2f} GFLOP/s  max rel. error vs reference {:.2e}",
               r.op, r.backend, r.median_ms, r.gflops, r.max_error)
        << std::endl;
    // Loose on purpose (TF32 and reduced-precision GPU paths pass); a wrong kernel is off by O(1).
    if (!(r.max_error <= 1e-2)) {
      throw Error(fmt::format("smoke {}: backend {} differs from the reference by {:.2e} (> 1e-2)", r.op, r.backend,
                              r.max_error));
    }
  });
  return 0;
}

}  // namespace ingot::cli
