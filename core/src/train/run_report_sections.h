// The HTML pieces of the run report other than the charts: a run's header, its notes, the
// per-stage table, the confusion heat map, and the tables that compare several runs.
#pragma once

#include <string>
#include <vector>

#include "run_report_data.h"

namespace ingot::train {

/// Name, folder, status, device and backends, threads, world size, time, final metrics.
std::string run_header_html(const RunReportData& run, const std::string& colour);
/// What is missing or partial in the run folder; empty when nothing is.
std::string run_notes_html(const RunReportData& run);
/// The stage_report records as a table; without any, a line saying they are missing when the run
/// asked for them (report: {stages: true}), else nothing.
std::string stage_table_html(const RunReportData& run);
/// The last evaluation's confusion matrix as a heat-map table with class names, or a line saying
/// the run has none.
std::string confusion_html(const RunReportData& run);
/// config.resolved.yaml in a collapsed block.
std::string config_block_html(const RunReportData& run);
/// One row per run: status, steps, time, final train loss, test accuracy and loss.
std::string comparison_html(const std::vector<RunReportData>& runs, const std::vector<std::string>& colours);
/// The flattened config keys whose values differ between the runs (absent counts as a value).
std::string config_diff_html(const std::vector<RunReportData>& runs);

}  // namespace ingot::train
