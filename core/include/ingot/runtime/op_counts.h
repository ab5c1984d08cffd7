// Ops by backend: how many ops each backend executed, counted where they execute, so a run's
// records say what ran rather than what was selected.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ingot {

class Backend;

/// Counts one executed op for `backend` (called by dispatch for every backend call).
void count_op(const Backend& backend);
/// Backend name and ops executed since the last reset, in the order backends first ran an op.
std::vector<std::pair<std::string, int64_t>> ops_by_backend();
/// The same as a JSON object: {"cpu_onednn":1234,"reference":5}.
std::string ops_by_backend_json();
/// Sets every count to 0.
void reset_op_counts();

}  // namespace ingot
