// The memory report of a run (`ingot run --memory-report`): each stage's peak allocated and
// reserved bytes, and the largest tensors live at the run's highest peak with the op that made
// them, as markdown (printed at the end of the run and written to runs/<name>/memory.md).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "ingot/train/memory_watch.h"

namespace ingot::train {

/// The report of what `watch` recorded (its stages; the open one is not included). Tensors are
/// listed when the watch tracked them (MemoryWatch(device, /*track_tensors=*/true)).
std::string memory_report(const MemoryWatch& watch, const std::string& run_name);

/// At the end of a run: closes `watch`'s open stage, prints the report to `out` and writes it to
/// `file` (runs/<name>/memory.md).
void write_memory_report(MemoryWatch& watch, const std::string& run_name, const std::filesystem::path& file,
                         std::ostream& out);

}  // namespace ingot::train
