// amp_census: which ops one mixed-precision training step of a model runs, in which dtypes, and
// on which backend. Builds each config's model, runs a step under autocast (bf16 by default) the
// way the trainer does — forward and loss in an autocast region, backward, AdamW step — and
// prints every distinct (op, input dtypes -> output dtypes) with its call count and the backend
// dispatch picked, as seen below autograd (the ops exactly as executed; in-place updates that
// bypass the chain, ADAM_UPDATE, are not seen). Ops the reference backend runs are flagged: those
// are the slow ones. With --time N it then times N more steps and prints their median (and with
// --profile the profiler's table of those steps).
//
//   amp_census [--dtype bf16|fp16|f32] [--batch N] [--time N [--profile]] CONFIG.yaml ...
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "ingot/amp/autocast.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/model_builder.h"
#include "ingot/ops/random.h"
#include "ingot/optim/adam.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/dispatch_chain.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/profiler.h"
#include "ingot/runtime/registry.h"

namespace {

using namespace ingot;

struct Row {
  int64_t calls = 0;
  std::string backend;
};
using Key = std::tuple<std::string, std::string, std::string>;  // op, input dtypes, output dtypes

std::string dtypes_of(const std::vector<Tensor>& ts) {
  std::string s;
  for (const Tensor& t : ts) s += (s.empty() ? "" : ",") + (t.defined() ? std::string(dtype_name(t.dtype())) : "-");
  return s;
}

std::string dtypes_of(const std::vector<OutputSpec>& specs) {
  std::string s;
  for (const OutputSpec& o : specs) s += (s.empty() ? "" : ",") + std::string(dtype_name(o.dtype));
  return s;
}

/// Sits below autograd: sees each op with the dtypes it runs in and asks dispatch who runs it.
class Census final : public OpInterceptor {
 public:
  const char* name() const override { return "amp_census"; }
  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    if (on_) {
      const std::string backend = select_backend(call.op, *call.inputs, *call.outputs, call.attrs, call.device).name();
      Row& r = rows_[{op_info(call.op).name, dtypes_of(*call.inputs), dtypes_of(*call.outputs)}];
      ++r.calls;
      r.backend = r.backend.empty() || r.backend == backend ? backend : r.backend + "+" + backend;
    }
    return next(call);
  }
  void start() { rows_.clear(), on_ = true; }
  void stop() { on_ = false; }
  const std::map<Key, Row>& rows() const { return rows_; }

 private:
  bool on_ = false;
  std::map<Key, Row> rows_;
};

void census(const std::string& file, DType dtype, int64_t batch, int timed_steps, bool profile, Census& census) {
  const YAML::Node config = YAML::LoadFile(file);
  Generator gen(0), dropout_gen(1), data_gen(2);
  const nn::ModulePtr model = nn::build_model(config["model"], file, gen, &dropout_gen);
  const std::optional<Shape> sample = nn::model_input_shape(config["model"], file);
  if (!sample) throw Error(file + ": model.input_shape is needed for the census");
  Shape x_shape{batch};
  for (int d = 0; d < sample->size(); ++d) x_shape.push_back((*sample)[d]);
  const int64_t classes = config["model"]["classes"] ? config["model"]["classes"].as<int64_t>() : 10;
  const Tensor x = randn(x_shape, DType::F32, &data_gen);
  const Tensor target =
      uniform({batch}, 0.0, static_cast<double>(classes) - 1e-6, DType::F32, &data_gen).to(DType::I64);
  const std::vector<Tensor> params = model->parameters();
  optim::AdamWOptions o;
  o.lr = 1e-3;
  optim::AdamW opt(params, o);
  model->train();
  std::vector<double> ms, cpu_ms;                       // wall and process CPU time per timed step
  for (int step = 0; step < 2 + timed_steps; ++step) {  // step 1 is counted (optimizer state exists then)
    if (step == 1) census.start();
    if (step == 2 && profile) Profiler::instance().start();
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    opt.zero_grad();
    Tensor loss;
    {
      const amp::AutocastRegion region(dtype == DType::F32 ? DType::BF16 : dtype, params, dtype != DType::F32);
      loss = nn::cross_entropy((*model)(x), target);
      loss.backward();
    }
    opt.step();
    (void)loss.item();
    census.stop();
    if (step >= 2) {
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      cpu_ms.push_back(1e3 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
    }
  }
  if (profile && timed_steps > 0) Profiler::instance().stop();
  std::printf("\n%s: one training step, batch %lld, %s\n", file.c_str(), static_cast<long long>(batch),
              dtype == DType::F32 ? "f32" : "autocast bf16");
  std::printf("  %-20s %-40s %-22s %6s  %s\n", "op", "inputs", "outputs", "calls", "backend");
  int64_t total = 0, on_reference = 0;
  for (const auto& [key, row] : census.rows()) {
    const auto& [op, in, out] = key;
    const bool ref = row.backend.find("reference") != std::string::npos;
    std::printf("  %-20s %-40s %-22s %6lld  %s%s\n", op.c_str(), in.c_str(), out.c_str(),
                static_cast<long long>(row.calls), row.backend.c_str(), ref ? "   <-- reference" : "");
    total += row.calls;
    on_reference += ref ? row.calls : 0;
  }
  std::printf("  %lld ops, %lld on the reference backend\n", static_cast<long long>(total),
              static_cast<long long>(on_reference));
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    // CPU time (all threads) is the steadier figure on a shared machine; wall time is what a run sees
    std::sort(cpu_ms.begin(), cpu_ms.end());
    std::printf("  step time over %zu steps: wall median %.2f ms (min %.2f), CPU median %.2f ms (min %.2f)\n",
                ms.size(), ms[ms.size() / 2], ms.front(), cpu_ms[cpu_ms.size() / 2], cpu_ms.front());
  }
  if (profile && timed_steps > 0) std::printf("%s\n", Profiler::instance().report().table(25).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  DType dtype = DType::BF16;
  int64_t batch = 128;
  int timed_steps = 0;
  bool profile = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dtype" && i + 1 < argc) {
      const std::string d = argv[++i];
      dtype = d == "f32" ? DType::F32 : d == "fp16" ? DType::F16 : DType::BF16;
    } else if (a == "--batch" && i + 1 < argc) {
      batch = std::stoll(argv[++i]);
    } else if (a == "--profile") {
      profile = true;
    } else if (a == "--time" && i + 1 < argc) {
      timed_steps = std::stoi(argv[++i]);
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: amp_census [--dtype bf16|fp16|f32] [--batch N] [--time N [--profile]] CONFIG.yaml ...\n");
      return 0;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "amp_census: name at least one config (configs/fashion_mnist_cnn.yaml ...)\n");
    return 2;
  }
  try {
    PluginLoader::instance().load_all();
    auto c = std::make_shared<Census>();
    dispatch_chain::add(c, InterceptorOrder::Capture);
    for (const std::string& f : files) census(f, dtype, batch, timed_steps, profile, *c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "amp_census: %s\n", e.what());
    return 1;
  }
  return 0;
}
