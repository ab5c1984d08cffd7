// `ingot doctor`: what this machine offers Ingot and what stands in the way — the CPU's vector
// extensions, threads, memory, every plugin (usable, or why not), the backends and their devices,
// communicators, extensions and datasets — each problem with what to do about it, and what is
// normal here (GPU plugins on a machine without an NVIDIA GPU) as information.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/data/fashion_mnist.h"
#include "ingot/extension/extension_loader.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "ingot/runtime/threads.h"

namespace ingot::cli {
namespace {

/// The first "key : value" line of /proc/cpuinfo with this key ("" when absent).
std::string cpuinfo(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
  }
  return "";
}

int64_t meminfo_kib(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  return -1;
}

/// The kernel plugins Ingot ships, what building each needs, and whether it runs on NVIDIA GPUs
/// only (on a machine without one, such a plugin not being usable is normal).
struct Expected {
  const char* name;
  const char* needs;
  bool nvidia_gpu;
};
constexpr Expected kPlugins[] = {
    {"cpu_onednn", "oneDNN 2.6: apt-get install libdnnl-dev, then rebuild (scripts/setup)", false},
    {"cuda", "CUDA's nvcc (looked for in /usr/local/cuda); Ingot's scripts never install CUDA", true},
    {"gloo_ddp", "Gloo: apt-get install libgloo-dev, then rebuild (scripts/setup)", false},
    {"nccl_ddp", "the cuda plugin and NCCL's nccl.h >= 2.14 (CUDA's include folder)", true},
};

bool needs_nvidia_gpu(const std::string& plugin) {
  return std::any_of(std::begin(kPlugins), std::end(kPlugins),
                     [&](const Expected& e) { return e.nvidia_gpu && plugin == e.name; });
}

/// Whether the PCI bus has an NVIDIA display or 3D controller (vendor 0x10de, class 0x03....),
/// driver or not: without one, a missing driver is not a problem.
bool nvidia_gpu_on_pci() {
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator("/sys/bus/pci/devices", ec)) {
    std::string vendor, cls;
    std::ifstream(dev.path() / "vendor") >> vendor;
    std::ifstream(dev.path() / "class") >> cls;
    if (vendor == "0x10de" && cls.rfind("0x03", 0) == 0) return true;
  }
  return false;
}

}  // namespace

int cmd_doctor(const std::vector<std::string>& args) {
  if (!args.empty() && args.front() != "--help" && args.front() != "-h")
    throw ConfigError(fmt::format("ingot doctor takes no arguments (got '{}')", args.front()));
  if (!args.empty()) {
    std::cout << "usage: ingot doctor\n\nWhat this machine offers Ingot (CPU extensions, threads, memory, plugins, "
                 "devices, communicators, extensions, datasets) and, for each problem, what to do.\n";
    return 0;
  }
  std::vector<std::string> problems, notes;
  std::cout << fmt::format("ingot {} (plugin ABI {}.{})\n\n", INGOT_VERSION, INGOT_ABI_MAJOR, INGOT_ABI_MINOR);

  // CPU and threads.
  std::istringstream flags_text(cpuinfo("flags"));
  const std::set<std::string> flags{std::istream_iterator<std::string>(flags_text), {}};
  const auto has = [&](const char* f) { return flags.count(f) != 0; };
  std::vector<std::string> isa;
  for (const char* f : {"avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile",
                        "amx_bf16", "amx_int8"})
    if (has(f)) isa.push_back(f);
  std::cout << fmt::format("cpu: {}\n  extensions: {}\n", cpuinfo("model name").empty() ? "?" : cpuinfo("model name"),
                           isa.empty() ? "none of avx2 / avx512 / amx" : fmt::format("{}", fmt::join(isa, " ")));
  std::cout << fmt::format("  bf16 compute: {}; int8 dot products: {}\n",
                           has("amx_bf16") ? "AMX" : has("avx512_bf16") ? "AVX512-BF16" : "emulated (slower than f32)",
                           has("amx_int8") ? "AMX" : has("avx512_vnni") ? "VNNI" : "without VNNI (int8 gains little)");
  if (!has("avx2")) problems.push_back("the CPU has no AVX2: oneDNN falls back to slow kernels");
  const char* omp = std::getenv("OMP_NUM_THREADS");
  std::cout << fmt::format("threads: {} usable core(s), {} compute thread(s) by default{}\n", usable_cores(),
                           num_threads(), omp ? fmt::format(" (OMP_NUM_THREADS={})", omp) : std::string());
  if (const int64_t kib = meminfo_kib("MemAvailable"); kib >= 0)
    std::cout << fmt::format("memory: {:.1f} GiB available of {:.1f} GiB\n", kib / 1048576.0,
                             meminfo_kib("MemTotal") / 1048576.0);

  // Plugins: loaded or why not; the shipped ones that are not built.
  PluginLoader& loader = PluginLoader::instance();
  loader.load_all();
  std::cout << "\nplugins:\n";
  std::set<std::string> seen;
  const bool nvidia_gpu = nvidia_gpu_on_pci();
  std::vector<std::string> idle_gpu_plugins;  // (not usable because the machine has no NVIDIA GPU)
  for (const PluginRecord& r : loader.records()) {
    seen.insert(r.name);
    std::cout << fmt::format("  {:<12} {}\n", r.name, r.available ? "usable" : "not usable: " + r.reason);
    if (r.available || r.reason.find("INGOT_DISABLE_PLUGINS") != std::string::npos) continue;  // (disabled on purpose)
    if (!nvidia_gpu && needs_nvidia_gpu(r.name))
      idle_gpu_plugins.push_back(r.name);
    else
      problems.push_back(fmt::format("plugin {}: {}", r.name, r.reason));
  }
  const auto disabled = PluginLoader::disabled_names();
  for (const Expected& e : kPlugins) {
    if (seen.count(e.name) != 0) continue;
    const bool off = std::find(disabled.begin(), disabled.end(), e.name) != disabled.end();
    std::cout << fmt::format("  {:<12} {}\n", e.name, off ? "disabled by INGOT_DISABLE_PLUGINS" : "not built: needs " + std::string(e.needs));
    if (off) continue;
    if (!nvidia_gpu && e.nvidia_gpu)
      idle_gpu_plugins.push_back(e.name);
    else
      problems.push_back(fmt::format("plugin {} is not built: it needs {}", e.name, e.needs));
  }
  if (!idle_gpu_plugins.empty())
    notes.push_back(
        fmt::format("no NVIDIA GPU on this machine's PCI bus: {} ha{} nothing to run on, which is normal "
                    "here; runs use the CPU",
                    fmt::join(idle_gpu_plugins, " and "), idle_gpu_plugins.size() == 1 ? "s" : "ve"));

  std::cout << "\nbackends and devices:\n";
  for (const auto& b : BackendRegistry::instance().backends())
    std::cout << fmt::format("  {:<12} {} device(s) of kind {}{}\n", b->name(), b->device_count(),
                             b->device_kind() == DeviceKind::CUDA ? "cuda" : "cpu", b->enabled() ? "" : " (disabled)");
  std::cout << "communicators:";
  if (CommunicatorRegistry::instance().components().empty()) std::cout << " none (no distributed training)";
  for (const CommunicatorComponent& c : CommunicatorRegistry::instance().components())
    std::cout << fmt::format(" {} ({})", c.name, c.device_kind == DeviceKind::CUDA ? "cuda" : "cpu");
  std::cout << "\n";

  ExtensionLoader& extensions = ExtensionLoader::instance();
  extensions.load_all();
  std::cout << "extensions:";
  if (extensions.records().empty()) std::cout << " none";
  for (const ExtensionRecord& r : extensions.records()) {
    std::cout << fmt::format(" {}{}", r.name, r.available ? "" : " (not usable)");
    if (!r.available) problems.push_back(fmt::format("extension {}: {}", r.name, r.reason));
  }
  std::cout << "\n";

  // Datasets.
  const std::filesystem::path fm(data::kFashionMnistDir);
  const bool fm_ok = std::filesystem::exists(fm / "train-images-idx3-ubyte.gz") ||
                     std::filesystem::exists(fm / "train-images-idx3-ubyte");
  std::cout << fmt::format("\ndatasets:\n  fashion_mnist  {}\n  synthetic      always (made in memory)\n",
                           fm_ok ? fm.string() : "missing (" + fm.string() + ")");
  if (!fm_ok) problems.push_back("Fashion-MNIST is not installed: apt-get install dataset-fashion-mnist");

  std::cout << "\n";
  for (const std::string& n : notes) std::cout << "info: " << n << "\n";
  if (problems.empty()) {
    std::cout << "no problems found\n";
  } else {
    std::cout << fmt::format("{} thing(s) to look at:\n", problems.size());
    for (const std::string& p : problems) std::cout << "  - " << p << "\n";
  }
  return 0;
}

}  // namespace ingot::cli
