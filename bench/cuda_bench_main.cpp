// main() of the CUDA benchmarks: without a usable cuda backend a program says why in one line and
// exits 3 before running anything (a GPU check counts that as a failure, never as a pass); with
// one, it exits 1 when any benchmark reported an error. --benchmark_list_tests needs no GPU.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_cuda_util.h"
#include "ingot/runtime/plugin_loader.h"

namespace ingot::bench {

std::string cuda_unavailable_reason() {
  static const std::string why = [] {
    PluginLoader::instance().load_all();
    const PluginRecord* rec = PluginLoader::instance().find("cuda");
    if (rec == nullptr) return std::string("the cuda plugin was not found (set INGOT_PLUGIN_PATH to its folder)");
    return rec->available ? std::string() : rec->reason;
  }();
  return why;
}

namespace {

/// The display reporter, counting the runs that reported an error.
template <class Base>
class CountingReporter : public Base {
 public:
  using Base::Base;
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    for (const auto& r : runs) failures_ += r.error_occurred ? 1 : 0;
    Base::ReportRuns(runs);
  }
  int failures() const { return failures_; }

 private:
  int failures_ = 0;
};

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0 || std::string(argv[i]) == std::string(flag) + "=true") return true;
  }
  return false;
}

template <class Reporter>
int run_all(Reporter& reporter, const char* prog) {
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  if (reporter.failures() > 0) {
    std::fprintf(stderr, "%s: %d benchmark(s) reported an error (ERROR OCCURRED above)\n", prog, reporter.failures());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ingot::bench

int main(int argc, char** argv) {
  using namespace ingot::bench;
  const char* prog = argc > 0 ? std::strrchr(argv[0], '/') : nullptr;
  prog = prog != nullptr ? prog + 1 : (argc > 0 ? argv[0] : "bench_cuda");
  const bool list_only = has_flag(argc, argv, "--benchmark_list_tests");
  const bool json = has_flag(argc, argv, "--benchmark_format=json");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  register_benchmarks();
  if (!list_only) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) {
      std::fprintf(stderr, "%s: cuda backend unavailable: %s; run it on a machine with an NVIDIA GPU\n", prog,
                   why.c_str());
      return 3;
    }
  }
  if (json) {
    CountingReporter<benchmark::JSONReporter> reporter;
    return run_all(reporter, prog);
  }
  CountingReporter<benchmark::ConsoleReporter> reporter(isatty(STDOUT_FILENO) != 0
                                                            ? benchmark::ConsoleReporter::OO_ColorTabular
                                                            : benchmark::ConsoleReporter::OO_Tabular);
  return run_all(reporter, prog);
}
