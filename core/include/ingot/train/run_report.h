// The run report: one self-contained HTML page (inline CSS and SVG, nothing fetched) of one or
// more run folders — header, curves, the per-stage table, the last confusion matrix and, for
// several runs, overlaid curves, a final-metrics table and the config keys that differ.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ingot::train {

/// The page for `runs` (folders written by `ingot run`), as HTML text. Missing or partial files
/// (a run still running, interrupted, without eval) are named in the page instead of failing.
/// Throws InputError (one line) when `runs` is empty or a folder does not exist.
std::string run_report_html(const std::vector<std::filesystem::path>& runs);

/// Writes run_report_html(runs) to `out` atomically (temporary file, fsync, rename). Throws
/// InputError when the folder of `out` does not exist.
void write_run_report(const std::vector<std::filesystem::path>& runs, const std::filesystem::path& out);

}  // namespace ingot::train
