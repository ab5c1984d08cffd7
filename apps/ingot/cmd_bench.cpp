// `ingot bench CONFIG.yaml`: times training steps, inference batches and batch-1 latency of a
// pipeline's model on in-memory data; a table for people or, with --json, one JSON object.
// `ingot bench --data CONFIG.yaml`: the training loader alone, in images/s per worker count.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "config_search.h"
#include "ingot/base/error.h"
#include "ingot/extension/extension_loader.h"
#include "ingot/train/bench.h"
#include "ingot/train/data_bench.h"

namespace po = boost::program_options;

namespace ingot::cli {

namespace {

/// "0,1,2" as integers; ConfigError naming `flag` for anything else.
std::vector<int> parse_int_list(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || v < 0)
      throw ConfigError(fmt::format("ingot bench {} {}: expected worker counts such as 0,1,2", flag, text));
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  train::BenchOptions o;
  po::options_description opts("ingot bench");
  opts.add_options()("config", po::value<std::string>(), "pipeline config (YAML)")(
      "json", po::bool_switch(), "print one JSON object on stdout (everything else on stderr)")(
      "profile", po::value<std::string>(), "profile the timed training steps into DIR")(
      "warmup", po::value<int64_t>(&o.warmup), "untimed steps before each measurement")(
      "steps", po::value<int64_t>(&o.steps), "timed training steps and inference batches per repeat")(
      "repeat", po::value<int64_t>(&o.repeat), "repeats of each measurement")(
      "batch-size", po::value<int64_t>(), "training batch (default: data.batch_size)")(
      "infer-batch", po::value<int64_t>(&o.infer_batch), "inference batch")(
      "latency-iters", po::value<int64_t>(&o.latency_iters), "batch-1 forwards per repeat")(
      "infer-dtype", po::value<std::string>(&o.infer_dtype), "inference and latency dtype: f32 (default) or bf16")(
      "threads", po::value<int>(), "compute threads (default: the config's, else the usual budget)")(
      "save-init", po::value<std::string>(), "write the initial weights to FILE.safetensors (torch names)")(
      "scaling", po::value<std::string>(),
      "also find the largest training batch whose step stays within this much memory (200MiB, 1.5GiB)")(
      "compile", po::bool_switch(&o.compile), "run training steps and forwards as captured graphs (train.compile)")(
      "dump-graph", po::value<std::string>(), "with --compile: write each graph before and after each pass into DIR")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a config key: --set model.width=64")(
      "data", po::bool_switch(), "time the training loader alone (images/s per worker count), no model")(
      "workers", po::value<std::string>(), "with --data: worker counts to time, e.g. 0,1,2 (default 0, 1, 2, 4, ...)");
  po::positional_options_description pos;
  pos.add("config", 1);
  po::variables_map vm;
  std::vector<std::string> argv = args;
  const bool profile = take_bare_flag(argv, "--profile");
  po::store(po::command_line_parser(argv).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  if (!vm.count("config"))
    throw ConfigError(
        "usage: ingot bench CONFIG.yaml [--json] [--profile[=DIR]] [--warmup N] [--steps N] "
        "[--repeat R] [--batch-size B] [--infer-batch B] [--latency-iters N] [--infer-dtype f32|bf16] [--threads T] "
        "[--save-init FILE] [--scaling SIZE] [--compile] [--dump-graph DIR] [--set KEY=VALUE]...; or ingot bench "
        "--data CONFIG.yaml [--workers 0,1,2] [--steps N] [--repeat R] [--json] [--set KEY=VALUE]...");
  o.config = find_config_file(vm["config"].as<std::string>());
  if (vm.count("batch-size")) o.batch_size = vm["batch-size"].as<int64_t>();
  if (vm.count("threads")) o.threads = vm["threads"].as<int>();
  if (vm.count("save-init")) o.save_init = vm["save-init"].as<std::string>();
  if (vm.count("scaling")) o.scaling_limit = train::parse_memory_size(vm["scaling"].as<std::string>(), "--scaling");
  if (vm.count("dump-graph")) o.dump_graph = vm["dump-graph"].as<std::string>();
  if (vm.count("set")) o.overrides = vm["set"].as<std::vector<std::string>>();
  if (profile || vm.count("profile"))
    o.profile_dir = vm.count("profile") ? vm["profile"].as<std::string>() : "ingot-profile";
  const bool json = vm["json"].as<bool>();
  std::ostream& log = json ? std::cerr : std::cout;
  ExtensionLoader::instance().load_all();  // their types may appear in the config
  if (vm["data"].as<bool>()) {
    train::DataBenchOptions d;
    d.config = o.config;
    d.overrides = o.overrides;
    if (vm.count("steps")) d.batches = o.steps;
    if (vm.count("repeat")) d.repeat = o.repeat;
    if (vm.count("workers")) d.workers = parse_int_list(vm["workers"].as<std::string>(), "--workers");
    const train::DataBenchResult r = train::run_data_bench(d, log);
    std::cout << (json ? r.to_json() + "\n" : r.table()) << std::flush;
    return 0;
  }
  if (vm.count("workers")) throw ConfigError("ingot bench: --workers goes with --data (the loader alone)");
  const train::BenchResult r = train::run_bench(o, log);
  if (json) {
    std::cout << r.to_json() << std::endl;
  } else {
    std::cout << r.table() << std::flush;
  }
  return 0;
}

}  // namespace ingot::cli
