// `ingot report RUN [RUN...] [-o FILE.html]`: one self-contained HTML page of one run folder
// (curves, per-stage table, confusion matrix) or of several overlaid and compared.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/train/run_report.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace ingot::cli {

int cmd_report(const std::vector<std::string>& args) {
  po::options_description opts("ingot report");
  opts.add_options()("output,o", po::value<std::string>(),
                     "the page to write (default: RUN/report.html for one run, ./report.html for several)")(
      "help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("runs", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("runs", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  constexpr const char* kUsage = "usage: ingot report RUN_FOLDER [RUN_FOLDER...] [-o FILE.html]";
  constexpr const char* kAbout =
      "Writes a self-contained HTML page: the run's header, loss / accuracy / learning-rate / throughput /\n"
      "memory curves, the per-stage table and the last confusion matrix; several runs are overlaid and\n"
      "compared (final metrics, config keys that differ). docs/report.md";
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << kAbout << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("runs")) throw ConfigError(fmt::format("no run folder given; {}", kUsage));
  std::vector<fs::path> runs;
  for (const std::string& r : vm["runs"].as<std::vector<std::string>>()) runs.emplace_back(r);
  fs::path out;
  if (vm.count("output")) {
    out = vm["output"].as<std::string>();
  } else {
    out = runs.size() == 1 ? runs[0] / "report.html" : fs::path("report.html");
  }
  train::write_run_report(runs, out);
  std::cout << fmt::format("report: {}\n", out.string());
  return 0;
}

}  // namespace ingot::cli
