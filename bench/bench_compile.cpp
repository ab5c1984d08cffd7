// A compiled step against the eager one in the same process: the training step (forward,
// cross-entropy, backward, AdamW, reading the loss) at batch 128 and the batch-1 forward of the
// Fashion-MNIST MLP, CNN and ResNet-8, eager and through graph::CompiledStep (measured once it
// replays; the conv nets' steps also with Winograd convolutions). Run with --benchmark_repetitions=N --benchmark_enable_random_interleaving=true so that
// eager and compiled alternate and a noisy machine's drift hits both.
#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <string>

#include "ingot/base/grad_mode.h"
#include "ingot/graph/compiled_step.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/random.h"
#include "ingot/optim/adam.h"
#include "load_onednn.h"

namespace {

using namespace ingot;

struct Workload {
  std::shared_ptr<nn::Module> model;
  Shape sample;
};

Workload make(const std::string& name) {
  Generator gen(1);
  if (name == "mlp") return {nn::make_mlp({{784, 512, 256, 10}, "relu", 0.0}, &gen), {1, 28, 28}};
  if (name == "cnn") return {nn::make_simple_cnn({}, &gen), {1, 28, 28}};
  nn::ResNetOptions o;
  o.depth = 8;
  o.in_channels = 1;
  return {nn::make_resnet(o, &gen), {1, 28, 28}};
}

Shape batched(int64_t n, const Shape& s) {
  Shape out{n};
  for (int64_t d : s) out.push_back(d);
  return out;
}

enum class Mode { Eager, Compiled, Winograd };

void train_step(benchmark::State& state, const std::string& name, Mode mode) {
  if (!bench::load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  Workload w = make(name);
  w.model->train();
  optim::AdamWOptions ao;
  ao.lr = 1e-3;
  optim::AdamW opt(w.model->parameters(), ao);
  Generator data(2);
  const Tensor x = randn(batched(128, w.sample), DType::F32, &data);
  std::vector<int64_t> labels(128);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
  const Tensor y = Tensor::from_vector(labels, Shape{128});
  std::optional<graph::CompiledStep> cs;
  graph::CompileOptions options;
  options.winograd = mode == Mode::Winograd;
  if (mode != Mode::Eager) cs.emplace(options, w.model->parameters(), w.model->buffers());
  auto step = [&] {
    const auto body = [&] {
      const Tensor loss = nn::cross_entropy((*w.model)(x), y);
      loss.backward();
      return std::vector<Tensor>{loss};
    };
    const Tensor loss = cs ? cs->run({x, y}, {{"train", 1}}, body).front() : body().front();
    benchmark::DoNotOptimize(loss.item());
    opt.step();
    opt.zero_grad();
  };
  for (int i = 0; i < 5; ++i) step();  // warm-up: eager, two captures, replays
  if (cs && cs->stats().replayed == 0) return state.SkipWithError("the compiled step does not replay");
  for (auto _ : state) step();
  state.counters["images_per_s"] = benchmark::Counter(128.0, benchmark::Counter::kIsIterationInvariantRate);
}

void forward_b1(benchmark::State& state, const std::string& name, bool compiled) {
  if (!bench::load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  Workload w = make(name);
  w.model->eval();
  const NoGradGuard no_grad;
  Generator data(3);
  const Tensor x = randn(batched(1, w.sample), DType::F32, &data);
  std::optional<graph::CompiledStep> cs;
  if (compiled) cs.emplace(graph::CompileOptions{}, std::vector<Tensor>{}, w.model->buffers());
  auto forward = [&] {
    const auto body = [&] { return std::vector<Tensor>{(*w.model)(x).strided()}; };
    benchmark::DoNotOptimize(cs ? cs->run({x}, {{"train", 0}}, body) : body());
  };
  for (int i = 0; i < 10; ++i) forward();
  if (cs && cs->stats().replayed == 0) return state.SkipWithError("the compiled forward does not replay");
  for (auto _ : state) forward();
}

}  // namespace

BENCHMARK_CAPTURE(train_step, mlp_eager, "mlp", Mode::Eager)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(train_step, mlp_compiled, "mlp", Mode::Compiled)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(train_step, cnn_eager, "cnn", Mode::Eager)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(train_step, cnn_compiled, "cnn", Mode::Compiled)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(train_step, cnn_winograd, "cnn", Mode::Winograd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(train_step, resnet8_eager, "resnet8", Mode::Eager)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(train_step, resnet8_compiled, "resnet8", Mode::Compiled)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(train_step, resnet8_winograd, "resnet8", Mode::Winograd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(forward_b1, mlp_eager, "mlp", false)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(forward_b1, mlp_compiled, "mlp", true)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(forward_b1, cnn_eager, "cnn", false)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(forward_b1, cnn_compiled, "cnn", true)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(forward_b1, resnet8_eager, "resnet8", false)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(forward_b1, resnet8_compiled, "resnet8", true)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK_MAIN();
