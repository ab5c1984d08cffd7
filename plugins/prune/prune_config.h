// The `prune` stage's and the `gradual_prune` callback's keys: the method (torch.nn.utils.prune's
// l1_unstructured, global_unstructured, random_unstructured, ln_structured), the amount (a
// fraction or a count, as torch), the layers, the Zhu & Gupta schedule and make_permanent.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingot/config/schema.h"

namespace ingot::prune {

enum class Method { L1Unstructured, GlobalUnstructured, RandomUnstructured, LnStructured };

/// "l1_unstructured", ... as written in the config.
const char* method_name(Method m);
/// Whether `m` removes whole filters / neurons (and so can shrink the layers).
inline bool is_structured(Method m) { return m == Method::LnStructured; }

/// torch's `amount`: a float in [0, 1] is the fraction of the weights (filters for ln_structured)
/// to prune, a non-negative integer their number.
struct Amount {
  bool is_count = false;
  double fraction = 0.0;
  int64_t count = 0;

  static Amount of_fraction(double f) { return Amount{false, f, 0}; }
  static Amount of_count(int64_t n) { return Amount{true, 0.0, n}; }
  /// "80%" or "7".
  std::string str() const;
};

/// Zhu & Gupta (2017)'s gradual schedule: over `steps` optimizer steps from `begin`, the
/// sparsity rises as s_t = s_f + (s_i - s_f) (1 - (t - begin) / steps)^3, the masks recomputed
/// every `frequency` steps; s_f is reached at begin + steps and held after.
struct ZhuGupta {
  int64_t steps = 1;
  int64_t frequency = 1;
  double initial = 0.0;
  int64_t begin = 0;

  /// s_t after t optimizer steps (the final sparsity `final_sparsity` from begin + steps on;
  /// 0 before begin).
  double sparsity_at(int64_t t, double final_sparsity) const;
  /// Whether the masks are recomputed before optimizer step t + 1 (t steps done): t = begin,
  /// begin + frequency, ..., and begin + steps.
  bool is_update(int64_t t) const;
  /// The last update point at or before t (t >= begin).
  int64_t last_update(int64_t t) const;
  /// The end of the schedule: begin + steps.
  int64_t end() const { return begin + steps; }
};

struct PruneConfig {
  Method method = Method::L1Unstructured;
  Amount amount;
  int64_t n = 1;                    ///< ln_structured: the norm
  std::vector<std::string> layers;  ///< state_dict prefixes; empty = the method's default
  std::optional<ZhuGupta> schedule;
  bool make_permanent = true;
  uint64_t seed = 0;     ///< random_unstructured in the callback (the stage uses the run's seed)
  YAML::Node fine_tune;  ///< the stage's `fine_tune:` map (none: not a map)
  std::string where;     ///< "FILE:LINE: stages.prune" for messages
};

/// The keys of `type: prune` in `stages:` (fine_tune included).
config::Schema prune_stage_schema();
/// The keys of `type: gradual_prune` in `train.callbacks:` (a schedule required, a seed).
config::Schema gradual_prune_schema();

/// Reads a validated section; throws ConfigError (FILE:LINE, the key, what to do) for what the
/// schema cannot say: an amount that is neither a fraction in [0, 1] nor a count, `n` with another
/// method, a schedule with a count or with an initial sparsity above the amount.
PruneConfig parse_prune_config(const YAML::Node& node, const std::string& file, const std::string& path);

}  // namespace ingot::prune
