// Shared test helpers: skips, deterministic random tensors, tolerance checks.
#include "test_support.h"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "cpu_isa.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"

namespace ingot::test {

void run_threads(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  std::mutex mu;
  std::exception_ptr failure;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

void skip(const std::string& reason) { std::cout << "INGOT_SKIP: " << reason << std::endl; }

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  return pclose(p) == 0 ? out : std::string();
}

bool transformers_or_skip(const std::string& python) {
  if (std::system(fmt::format("{} -c 'import torch, transformers, safetensors' > /dev/null 2>&1", python).c_str()) == 0)
    return true;
  skip("no Python with torch and transformers at " + python + " (bench/compare installs the bench venv)");
  return false;
}

bool claimed_from(bool claimed, const std::string& what, const std::string& from_isa) {
  if (claimed) return true;
  const std::optional<CpuIsa> from = isa_from_name(from_isa);
  INFO(what << " declined at " << isa_name(effective_isa()));
  REQUIRE(from.has_value());
  REQUIRE(effective_isa() < *from);
  WARN(what << ": declined at " << isa_name(effective_isa()) << " (claimed from " << from_isa
            << " up), where it runs on the reference backend");
  return false;
}

const Backend* plugin_backend_or_skip(const std::string& plugin, const std::string& backend) {
  PluginLoader::instance().load_all();
  const PluginRecord* rec = PluginLoader::instance().find(plugin);
  if (rec == nullptr || !rec->available) {
    skip(rec == nullptr ? fmt::format("{} plugin not built (build target ingot_plugin_{})", plugin, plugin)
                        : fmt::format("{} plugin unavailable: {}", plugin, rec->reason));
    return nullptr;
  }
  return BackendRegistry::instance().find(backend);
}

std::vector<std::string> cpu_backends() {
  PluginLoader::instance().load_all();
  std::vector<std::string> names = {"reference"};
  for (const auto& b : BackendRegistry::instance().backends())
    if (b.get() != &BackendRegistry::instance().reference() && b->device_kind() == DeviceKind::CPU)
      names.push_back(b->name());
  return names;
}

std::vector<std::vector<std::string>> backend_sets(const std::string& what) {
  PluginLoader::instance().load_all();
  std::vector<std::vector<std::string>> sets{{"reference"}};
  if (BackendRegistry::instance().find("cpu_onednn") != nullptr)
    sets.push_back({});
  else
    std::cout << "warning: cpu_onednn is not loaded: " << what << " is checked on the reference backend only\n";
  return sets;
}

RestoreBackends::~RestoreBackends() { BackendRegistry::instance().restrict_to({}); }

Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(static_cast<size_t>(shape.numel()));
  for (auto& v : values) {
    v = dist(rng);
    if (dtype == DType::Bool)
      v = v > (lo + hi) / 2 ? 1.0 : 0.0;
    else if (is_integral(dtype))
      v = std::round(v);
  }
  return Tensor::from_vector(values, shape).to(dtype);
}

ingot_attr_conv2d conv2d_attr(int64_t stride, int64_t pad, int64_t dilation, int64_t groups, bool has_bias,
                              int32_t activation) {
  auto a = make_attr<ingot_attr_conv2d>();
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = pad;
  a.dilation[0] = a.dilation[1] = dilation;
  a.groups = groups;
  a.has_bias = has_bias;
  a.activation = activation;
  return a;
}

ingot_attr_pool2d pool2d_attr(int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode, bool count_include_pad) {
  auto a = make_attr<ingot_attr_pool2d>();
  a.kernel[0] = a.kernel[1] = kernel;
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = pad;
  a.ceil_mode = ceil_mode;
  a.count_include_pad = count_include_pad;
  return a;
}

namespace {
struct Mismatch {
  double excess = -1e300;
  int64_t index = -1;
  double a = 0, b = 0;
};

Mismatch worst(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  const auto a = actual.to_vector<double>();
  const auto b = expected.to_vector<double>();
  Mismatch m;
  for (size_t i = 0; i < a.size(); ++i) {
    double e;
    if (std::isnan(a[i]) || std::isnan(b[i]))
      e = std::isnan(a[i]) && std::isnan(b[i]) ? -1.0 : 1e300;
    else if (std::isinf(b[i]) || std::isinf(a[i]))
      e = a[i] == b[i] ? -1.0 : 1e300;
    else
      e = std::fabs(a[i] - b[i]) - (atol + rtol * std::fabs(b[i]));
    if (e > m.excess) m = {e, static_cast<int64_t>(i), a[i], b[i]};
  }
  return m;
}
}  // namespace

double excess_error(const Tensor& a, const Tensor& b, double atol, double rtol) {
  INGOT_CHECK_SHAPE(a.shape() == b.shape(), "excess_error: shapes {} and {}", a.shape().str(), b.shape().str());
  return a.numel() == 0 ? 0.0 : worst(a, b, atol, rtol).excess;
}

std::string compare(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  if (!(actual.shape() == expected.shape()))
    return fmt::format("shape {} vs expected {}", actual.shape().str(), expected.shape().str());
  if (actual.numel() == 0) return {};
  const Mismatch m = worst(actual, expected, atol, rtol);
  if (m.excess <= 0) return {};
  return fmt::format("element {} (row-major) is {} vs expected {} (|diff| {:.3g} > atol {} + rtol {} * |b|)", m.index,
                     m.a, m.b, std::fabs(m.a - m.b), atol, rtol);
}

}  // namespace ingot::test
