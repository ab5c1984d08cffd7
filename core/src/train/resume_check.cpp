// The checks of a resume against the run it continues (train/resume_check.h).
#include "ingot/train/resume_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/config/config.h"
#include "ingot/config/yaml_text.h"

namespace ingot::train {

namespace {

/// Keys that may change between a run and its resume: how it runs (threads, backend, loader
/// workers, prefetch, compile: a replayed step computes eager's bits), how often it logs and
/// checkpoints, and what a non-finite step does — not what it computes. The `resolved:` block (threads, device, backends) is compared apart.
constexpr const char* kRuntimeKeys[][2] = {{"threads", ""},
                                           {"backend", ""},
                                           {"data", "workers"},
                                           {"data", "prefetch"},
                                           {"train", "log_every"},
                                           {"train", "checkpoint"},
                                           {"train", "checkpoint_every"},
                                           {"train", "on_nonfinite"},
                                           {"train", "max_skipped"},
                                           {"train", "detect_anomaly"},
                                           {"train", "memory_check"},
                                           {"train", "compile"},
                                           {"logging", ""}};

/// `node` as config.resolved.yaml holds it, without the `resolved:` block and the runtime keys.
std::vector<std::string> config_lines(YAML::Node node) {
  node.remove("resolved");
  for (const auto& [section, key] : kRuntimeKeys) {
    if (*key == '\0') {
      node.remove(section);
    } else if (YAML::Node sub = node[section]; sub && sub.IsMap()) {
      sub.remove(key);
    }
  }
  // (as written: a run whose file has yaml-cpp's 17-digit numbers compares equal to today's)
  std::vector<std::string> lines;
  std::istringstream in(config::emit_yaml(node));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The runtime keys whose value differs between `a` and `b` ("threads", "data.workers", ...).
std::vector<std::string> changed_runtime_keys(const YAML::Node& a, const YAML::Node& b) {
  const auto text = [](const YAML::Node& root, const char* section, const char* key) {
    // (no assignment between nodes: it would write into the tree)
    const YAML::Node outer = root[section];
    const YAML::Node inner = *key == '\0' ? outer : outer && outer.IsMap() ? outer[key] : YAML::Node();
    if (!inner) return std::string("<unset>");
    return config::emit_yaml(inner);
  };
  std::vector<std::string> out;
  for (const auto& [section, key] : kRuntimeKeys)
    if (text(a, section, key) != text(b, section, key))
      out.push_back(*key == '\0' ? std::string(section) : fmt::format("{}.{}", section, key));
  return out;
}

/// A resume may train longer: train.epochs / train.steps may grow (never shrink). The schedule is
/// then recomputed for the new length, so the trees are compared with those two keys left out and
/// with the schedule as written in the config (resolved.scheduler_as_written) instead of its
/// resolved form, whose lengths follow the total. Says what changed.
bool extend_training(YAML::Node was, YAML::Node is, const RunDir& run, std::ostream& out) {
  const YAML::Node wt = was["train"], it = is["train"];
  if (!wt || !it || !wt.IsMap() || !it.IsMap()) return false;
  std::vector<std::string> grown;
  for (const char* key : {"epochs", "steps"}) {
    const int64_t before = wt[key] ? wt[key].as<int64_t>() : 0, after = it[key] ? it[key].as<int64_t>() : 0;
    if (before == after) continue;
    if (after < before || (before == 0) != (after == 0))
      throw InputError(fmt::format("{}: train.{} was {} and is now {}: a resume may only extend training (a larger "
                                   "train.epochs or train.steps); start over with --force to train less",
                                   run.path().string(), key, before, after));
    grown.push_back(fmt::format("train.{} {} -> {}", key, before, after));
  }
  if (grown.empty()) return false;
  const YAML::Node written_was = was["resolved"] ? was["resolved"]["scheduler_as_written"] : YAML::Node();
  if (!written_was) return false;  // a run from before this was recorded: compared as it is
  for (YAML::Node tree : {was, is}) {
    YAML::Node train = tree["train"];
    train.remove("epochs");
    train.remove("steps");
    train.remove("scheduler");
    const YAML::Node written = tree["resolved"]["scheduler_as_written"];
    if (written && !written.IsNull()) train["scheduler"] = YAML::Clone(written);
  }
  out << fmt::format("note: resuming with {}: the learning-rate schedule is recomputed for the new length\n",
                     fmt::join(grown, ", "));
  return true;
}

}  // namespace

bool check_resume_config(const RunDir& run, const YAML::Node& now, std::ostream& out) {
  YAML::Node before;
  try {
    before = config::load_yaml(run.config_path().string());
  } catch (const Error& e) {
    throw InputError(fmt::format("{} (the run's config): start over with --force", e.what()));
  }
  YAML::Node was_tree = YAML::Clone(before), is_tree = YAML::Clone(now);
  const bool extended = extend_training(was_tree, is_tree, run, out);
  const std::vector<std::string> a = config_lines(was_tree), b = config_lines(is_tree);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "", y = i < b.size() ? b[i] : "";
    if (x != y)
      throw InputError(
          fmt::format("{}: the config changed since the run started (resolved line {}: '{}' is now "
                      "'{}'): resume with the same config, or start over with --force",
                      run.path().string(), i + 1, x, y));
  }
  if (const auto keys = changed_runtime_keys(before, now); !keys.empty())
    out << fmt::format("note: resuming with changed {} (they change how the run goes, not what it computes)\n",
                       fmt::join(keys, ", "));
  YAML::Emitter was, is;
  for (const char* key : {"threads", "device", "backends", "fallback", "world_size"}) {
    was << before["resolved"][key];
    is << now["resolved"][key];
  }
  if (std::string(was.c_str()) != std::string(is.c_str()))
    out << fmt::format(
        "warning: resuming with different threads or backends than the run started with; losses "
        "will not match an uninterrupted run bit for bit\n");
  return extended;
}

void check_resume_world_size(const RunDir& run, int world_size) {
  int before = 1;
  try {
    const YAML::Node cfg = config::load_yaml(run.config_path().string());
    if (const YAML::Node r = cfg["resolved"]; r && r["world_size"]) before = r["world_size"].as<int>();
  } catch (const std::exception&) {  // (a YAML::Exception or an ingot::Error)
    return;  // check_resume_config names the unreadable file
  }
  if (before != world_size)
    throw InputError(fmt::format(
        "{}: the run was trained by {} process(es) and this resume has {}: every rank's share of the data and the "
        "samples of a step depend on it; resume with `ingot launch --nproc-per-node {}` (or start over with --force)",
        run.path().string(), before, world_size, before));
}


}  // namespace ingot::train
