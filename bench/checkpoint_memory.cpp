// checkpoint_memory: what gradient checkpointing saves and costs on a ResNet-20-style Sequential
// (a stem, nine basic blocks, pooling, a classifier) trained one step at a time: host bytes the
// graph keeps between forward and backward, the step's peak, and the median step time, plain
// against checkpoint_sequential with several segment counts and against every block checkpointed.
// Gradients of every variant are checked equal to the plain run's, bit for bit.
//
//   checkpoint_memory [--batch N] [--size S] [--width W] [--steps N] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "ingot/nn/loss.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/threads.h"

namespace {

using namespace ingot;
using namespace ingot::nn;

struct Options {
  int64_t batch = 128, size = 28, width = 16, steps = 5;
  int threads = 0;
};

std::shared_ptr<Sequential> resnet20(const Options& o, Generator& init) {
  init.manual_seed(1);
  Conv2dOptions c;
  c.padding = {1, 1};
  c.bias = false;
  auto net = std::make_shared<Sequential>();
  net->push_back(std::make_shared<Conv2d>(1, o.width, 3, c, &init));
  net->push_back(std::make_shared<BatchNorm2d>(o.width));
  net->push_back(std::make_shared<ReLU>());
  int64_t in = o.width;
  for (int stage = 0; stage < 3; ++stage)
    for (int b = 0; b < 3; ++b) {
      const int64_t out = o.width << stage;
      net->push_back(std::make_shared<BasicBlock>(in, out, b == 0 && stage > 0 ? 2 : 1, &init));
      in = out;
    }
  net->push_back(std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
  net->push_back(std::make_shared<Flatten>());
  net->push_back(std::make_shared<Linear>(in, 10, true, &init));
  net->train();
  return net;
}

struct Result {
  int64_t kept = 0;   ///< bytes allocated after forward + loss, beyond the step's start
  int64_t peak = 0;   ///< peak bytes during the step, beyond its start
  double ms = 0;      ///< median step time (wall clock)
  double cpu_ms = 0;  ///< median step CPU time of the process (all threads): steadier on a busy machine
  std::vector<std::vector<float>> grads;
};

Result measure(Sequential& net, const Tensor& x, const Tensor& y, int64_t steps) {
  Result r;
  std::vector<double> times, cpu_times;
  const StateDict start = [&] {
    StateDict s;
    for (const auto& [n, t] : net.state_dict()) s.emplace_back(n, t.detach().clone());
    return s;
  }();
  for (int64_t i = 0; i <= steps; ++i) {  // step 0 warms caches up and is not timed
    net.load_state_dict(start);           // the same step every time (BatchNorm's statistics included)
    net.zero_grad();
    const int64_t base = memory_stats(Device::cpu()).allocated;
    reset_peak_memory_stats(Device::cpu());
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    Tensor loss = cross_entropy(net(x), y);
    const int64_t after_forward = memory_stats(Device::cpu()).allocated;
    loss.backward();
    const auto t1 = std::chrono::steady_clock::now();
    const std::clock_t c1 = std::clock();
    loss = Tensor();
    if (i == 0) continue;
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    cpu_times.push_back(1000.0 * static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
    r.kept = after_forward - base;
    r.peak = memory_stats(Device::cpu()).peak_allocated - base;
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  r.ms = times[times.size() / 2];
  r.cpu_ms = cpu_times[cpu_times.size() / 2];
  for (const Tensor& p : net.parameters()) r.grads.push_back(p.grad().to_vector<float>());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int64_t v = std::atoll(argv[i + 1]);
    if (k == "--batch")
      o.batch = v;
    else if (k == "--size")
      o.size = v;
    else if (k == "--width")
      o.width = v;
    else if (k == "--steps")
      o.steps = std::max<int64_t>(1, v);
    else if (k == "--threads")
      o.threads = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: checkpoint_memory [--batch N] [--size S] [--width W] [--steps N] [--threads N]\n");
      return 2;
    }
  }
  PluginLoader::instance().load_all();
  if (o.threads > 0) set_num_threads(o.threads);
  Generator init;
  const Tensor x = randn({o.batch, 1, o.size, o.size});
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < o.batch; ++i) labels.push_back(i % 10);
  const Tensor y = Tensor::from_vector(labels, {o.batch});
  std::printf(
      "ResNet-20-style Sequential (width %lld, 15 top-level layers, 9 basic blocks), batch %lld, %lldx%lld, "
      "%d threads, median of %lld steps (forward + backward)\n",
      static_cast<long long>(o.width), static_cast<long long>(o.batch), static_cast<long long>(o.size),
      static_cast<long long>(o.size), num_threads(), static_cast<long long>(o.steps));
  std::printf("%-26s %14s %8s %14s %8s %10s %6s %10s %6s %s\n", "variant", "kept (B)", "kept %", "peak (B)", "peak %",
              "wall (ms)", "wall", "cpu (ms)", "cpu", "grads");
  Result plain;
  const auto row = [&](const std::string& name, const Result& r) {
    const bool same = plain.grads.empty() || r.grads == plain.grads;
    const double base_kept = plain.kept > 0 ? static_cast<double>(plain.kept) : static_cast<double>(r.kept);
    const double base_peak = plain.peak > 0 ? static_cast<double>(plain.peak) : static_cast<double>(r.peak);
    const double base_ms = plain.ms > 0 ? plain.ms : r.ms;
    const double base_cpu = plain.cpu_ms > 0 ? plain.cpu_ms : r.cpu_ms;
    std::printf("%-26s %14lld %7.1f%% %14lld %7.1f%% %10.1f %5.2fx %10.1f %5.2fx %s\n", name.c_str(),
                static_cast<long long>(r.kept), 100.0 * static_cast<double>(r.kept) / base_kept,
                static_cast<long long>(r.peak), 100.0 * static_cast<double>(r.peak) / base_peak, r.ms, r.ms / base_ms,
                r.cpu_ms, r.cpu_ms / base_cpu, same ? "bit-identical" : "DIFFER");
    return same;
  };
  bool ok = true;
  {
    auto net = resnet20(o, init);
    plain = measure(*net, x, y, o.steps);
    ok = row("plain", plain) && ok;
  }
  for (int64_t segments : {2, 3, 4, 5, 7}) {
    auto net = resnet20(o, init);
    checkpoint_sequential(*net, segments);
    ok = row("checkpoint_sequential " + std::to_string(segments), measure(*net, x, y, o.steps)) && ok;
  }
  {
    auto net = resnet20(o, init);
    for (size_t i = 3; i < 12; ++i) (*net)[i]->set_checkpoint();
    ok = row("every block checkpointed", measure(*net, x, y, o.steps)) && ok;
  }
  return ok ? 0 : 1;
}
