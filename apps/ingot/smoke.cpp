// Smoke ops for `ingot run`: inputs from a fixed seed, timings as medians, and a comparison with
// the reference backend so a wrong fast backend shows up at once.
#include "smoke.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "cli.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/random.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/registry.h"

namespace ingot::cli {
namespace {

// Inputs drawn on the host from the config's seed (Philox, so identical on every machine).
Tensor random_host(const Shape& shape, Generator& gen) { return uniform(shape, -1.0, 1.0, DType::F32, &gen); }

// Median wall time of `repeats` calls of `fn` after one warm-up call (which also builds plans).
double median_ms(int repeats, const std::function<Tensor()>& fn, Tensor* last) {
  *last = fn();
  std::vector<double> times;
  for (int i = 0; i < repeats && !interrupted(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    *last = fn();
    (void)last->to(Device::cpu());  // device backends: wait for the result
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double max_error(const Tensor& actual, const Tensor& expected) {
  const std::vector<double> a = actual.to_vector<double>();
  const std::vector<double> e = expected.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - e[i]) / (1.0 + std::fabs(e[i])));
  return worst;
}

SmokeResult smoke_matmul(const config::Config& cfg, Device device, int repeats, Generator& gen) {
  const int64_t n = cfg.get_int("smoke.matmul_size", 512);
  const Tensor a_host = random_host({n, n}, gen), b_host = random_host({n, n}, gen);
  const Tensor a = a_host.to(device), b = b_host.to(device);
  auto attr = make_attr<ingot_attr_matmul>();
  SmokeResult r;
  r.op = fmt::format("matmul {}x{}x{} f32", n, n, n);
  r.backend = select_backend(INGOT_OP_MATMUL, {a, b}, {{Shape{n, n}, DType::F32}}, &attr, device).name();
  Tensor y;
  r.median_ms = median_ms(repeats, [&] { return matmul(a, b); }, &y);
  r.gflops = r.median_ms > 0 ? 2.0 * static_cast<double>(n * n * n) / (r.median_ms * 1e6) : 0;
  if (interrupted()) return r;
  const Tensor ref = Tensor::empty({n, n});
  run_op_on(BackendRegistry::instance().reference(), INGOT_OP_MATMUL, {a_host, b_host}, {ref}, &attr);
  r.max_error = max_error(y, ref);
  return r;
}

SmokeResult smoke_conv2d(const config::Config& cfg, Device device, int repeats, Generator& gen) {
  const int64_t batch = cfg.get_int("smoke.conv.batch", 8), c = cfg.get_int("smoke.conv.channels", 16);
  const int64_t o = cfg.get_int("smoke.conv.out_channels", 32), hw = cfg.get_int("smoke.conv.size", 32);
  const int64_t k = cfg.get_int("smoke.conv.kernel", 3);
  Conv2dParams p;
  p.stride = {cfg.get_int("smoke.conv.stride", 1), cfg.get_int("smoke.conv.stride", 1)};
  p.padding = {cfg.get_int("smoke.conv.padding", k / 2), cfg.get_int("smoke.conv.padding", k / 2)};
  const Shape xs{batch, c, hw, hw}, ws{o, c, k, k};
  const Shape ys = conv2d_output_shape(xs, ws, p);
  const Tensor x_host = random_host(xs, gen), w_host = random_host(ws, gen);
  const Tensor x = x_host.to(device), w = w_host.to(device);
  const ingot_attr_conv2d attr = conv2d_attr(p, false, Activation::None);
  SmokeResult r;
  r.op = fmt::format("conv2d x{} w{} f32", xs.str(), ws.str());
  r.backend = select_backend(INGOT_OP_CONV2D, {x, w}, {{ys, DType::F32}}, &attr, device).name();
  Tensor y;
  r.median_ms = median_ms(repeats, [&] { return conv2d(x, w, Tensor(), p); }, &y);
  const double flops = 2.0 * static_cast<double>(ys.numel()) * static_cast<double>(c * k * k);
  r.gflops = r.median_ms > 0 ? flops / (r.median_ms * 1e6) : 0;
  if (interrupted()) return r;
  const Tensor ref = Tensor::empty(ys);
  run_op_on(BackendRegistry::instance().reference(), INGOT_OP_CONV2D, {x_host, w_host}, {ref}, &attr);
  r.max_error = max_error(y, ref);
  return r;
}

}  // namespace

void run_smoke(const config::Config& cfg, Device device, const std::function<void(const SmokeResult&)>& report) {
  const int repeats = static_cast<int>(cfg.get_int("smoke.repeats", 3));
  Generator gen(static_cast<uint64_t>(cfg.seed().value_or(0)));
  const SmokeResult mm = smoke_matmul(cfg, device, repeats, gen);
  if (interrupted()) return;  // an interrupted op has no meaningful timing
  report(mm);
  const SmokeResult conv = smoke_conv2d(cfg, device, repeats, gen);
  if (!interrupted()) report(conv);
}

}  // namespace ingot::cli
