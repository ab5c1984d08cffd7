// `ingot plugins [--verbose]`: one row per plugin (name, version, kinds, status); verbose adds
// the searched folders, every candidate file with its verdict, and the registered backends.
#include <boost/program_options.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>

#include "cli.h"
#include "ingot/extension/extension_loader.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"

namespace po = boost::program_options;

namespace ingot::cli {
namespace {

std::string kinds_text(uint32_t kinds) {
  if (kinds == 0) return "-";
  std::string out;
  if (kinds & INGOT_KIND_BACKEND) out = "backend";
  if (kinds & INGOT_KIND_COMMUNICATOR) out += out.empty() ? "communicator" : ",communicator";
  if (const uint32_t other = kinds & ~(INGOT_KIND_BACKEND | INGOT_KIND_COMMUNICATOR); other != 0) {
    out += fmt::format("{}0x{:x}", out.empty() ? "" : ",", other);
  }
  return out;
}

std::string status_text(const PluginRecord& r) { return r.available ? "available" : "unavailable: " + r.reason; }

void print_table(const std::deque<PluginRecord>& records) {
  size_t w_name = 4, w_version = 7, w_kinds = 5;
  for (const PluginRecord& r : records) {
    w_name = std::max(w_name, r.name.size());
    w_version = std::max(w_version, r.version.size());
    w_kinds = std::max(w_kinds, kinds_text(r.kinds).size());
  }
  std::cout << fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", "NAME", w_name, "VERSION", w_version, "KINDS", w_kinds, "STATUS");
  for (const PluginRecord& r : records) {
    std::cout << fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", r.name, w_name, r.version.empty() ? "-" : r.version,
                             w_version, kinds_text(r.kinds), w_kinds, status_text(r));
  }
}

void print_verbose(const PluginLoader& loader) {
  std::cout << "\nsearched folders (in order):\n";
  for (const PluginFolder& f : loader.folders()) {
    std::cout << fmt::format("  {}  [{}]{}\n", f.path, f.source, f.exists ? "" : "  (missing)");
  }
  const auto disabled = PluginLoader::disabled_names();
  if (!disabled.empty()) std::cout << fmt::format("INGOT_DISABLE_PLUGINS: {}\n", fmt::join(disabled, ", "));
  std::cout << "\ncandidate files:\n";
  for (const PluginRecord& r : loader.records()) {
    std::cout << fmt::format("  {}\n    -> {}{}\n", r.path, r.available ? "accepted: " + r.name : "rejected: " + r.reason,
                             r.description.empty() ? "" : " (" + r.description + ")");
  }
  if (loader.records().empty()) std::cout << "  (none)\n";
  std::cout << "\nbackends (highest priority wins per device; the reference is built in and the last resort):\n";
  std::cout << fmt::format("  {:<16} {:<12} {:<6} {:>8}  {}\n", "BACKEND", "PLUGIN", "DEVICE", "PRIORITY", "STATE");
  for (const auto& b : BackendRegistry::instance().backends()) {
    std::cout << fmt::format("  {:<16} {:<12} {:<6} {:>8}  {}\n", b->name(), b->plugin(),
                             b->device_kind() == DeviceKind::CUDA ? "cuda" : "cpu", b->priority(),
                             b->enabled() ? "enabled" : "disabled");
  }
  std::cout << "\ncommunicators:\n";
  if (CommunicatorRegistry::instance().components().empty()) std::cout << "  (none)\n";
  for (const CommunicatorComponent& c : CommunicatorRegistry::instance().components())
    std::cout << fmt::format("  {:<16} {:<12} {}\n", c.name, c.plugin, c.device_kind == DeviceKind::CUDA ? "cuda" : "cpu");
}

/// Extension plugins: name, version, status; verbose adds their folders, files and added types.
void print_extensions(const ExtensionLoader& loader, bool verbose) {
  std::cout << "\nextension plugins:\n";
  if (loader.records().empty()) std::cout << "  (none)\n";
  for (const ExtensionRecord& r : loader.records()) {
    std::cout << fmt::format("  {:<20} {:<8} {}\n", r.name, r.version.empty() ? "-" : r.version,
                             r.available ? "available" : "unavailable: " + r.reason);
    if (verbose) {
      std::cout << fmt::format("    {}\n", r.path);
      if (!r.added.empty()) std::cout << fmt::format("    adds: {}\n", fmt::join(r.added, ", "));
    }
  }
  if (verbose) {
    std::cout << "  searched folders (in order):\n";
    for (const std::string& f : ExtensionLoader::default_folders()) std::cout << fmt::format("    {}\n", f);
  }
}

}  // namespace

int cmd_plugins(const std::vector<std::string>& args) {
  po::options_description opts("ingot plugins");
  opts.add_options()("verbose,v", "also list searched folders, candidate files and backends");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);

  PluginLoader& loader = PluginLoader::instance();
  loader.load_all();
  if (loader.records().empty()) {
    std::cout << "no plugins found (only the built-in reference backend); 'ingot plugins --verbose' shows where Ingot looked\n";
  } else {
    print_table(loader.records());
  }
  ExtensionLoader& extensions = ExtensionLoader::instance();
  extensions.load_all();
  print_extensions(extensions, vm.count("verbose") != 0);
  if (vm.count("verbose")) print_verbose(loader);
  return 0;
}

}  // namespace ingot::cli
