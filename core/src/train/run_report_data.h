// RunReportData: what the report shows of one run folder, read from metrics.jsonl, summary.json
// and config.resolved.yaml — tolerant of a run still running, interrupted, or without eval.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ingot::train {

using Points = std::vector<std::pair<double, double>>;

/// The last evaluation's confusion matrix (rows: true class, columns: predicted).
struct ReportConfusion {
  std::vector<std::string> classes;  ///< may be empty (then the classes are numbered)
  std::vector<std::vector<double>> matrix;
};

/// One memory field of the train_step / epoch records over time.
struct ReportMemorySeries {
  std::string field;  ///< "mem_allocated_mb", "mem_reserved_mb", "mem_peak_mb"
  Points points;      ///< (seconds since the first record, MiB)
};

/// Everything the report takes from one run folder.
struct RunReportData {
  std::string name;  ///< summary's name, else the folder's name
  std::filesystem::path dir;
  std::vector<std::string> notes;  ///< what is missing or partial, one sentence each

  std::vector<std::pair<std::string, std::string>> summary;  ///< summary.json's scalars, as text
  bool has_summary = false;
  std::vector<std::pair<std::string, std::string>> config;  ///< flattened config keys ("train.epochs")
  std::string config_text;                                  ///< config.resolved.yaml as written

  Points train_loss;     ///< (step, loss) of every train_step record
  Points lr;             ///< (step, lr)
  Points throughput;     ///< (seconds since the first record, images/s)
  Points data_share;     ///< (epoch, share of its time spent waiting for batches)
  Points eval_loss;      ///< (step, loss) of every eval record of the test split
  Points eval_accuracy;  ///< (step, accuracy in %)
  Points val_loss;       ///< (step, loss) of every eval record of the validation split
  Points val_accuracy;   ///< (step, accuracy in %)
  std::vector<ReportMemorySeries> memory;
  std::optional<ReportConfusion> confusion;
  std::vector<std::vector<std::pair<std::string, std::string>>> stages;  ///< stage_report records
  std::optional<double> last_train_loss, last_eval_loss, last_eval_accuracy;
  std::optional<double> last_eval_perplexity;  ///< a language model's (eval records with "perplexity")
  /// The step (and epoch) of the best validation epoch (summary.json's best_epoch) and of the
  /// early stop (the early_stop record), for marks on the curves.
  std::optional<std::pair<int64_t, double>> best_epoch_step, early_stop_step;
  std::vector<std::pair<int64_t, double>> validation_epochs;  ///< (epoch, step) of each validation evaluation
  size_t records = 0;

  /// The summary's value of `key`; empty when absent.
  std::string summary_value(const std::string& key) const;
  /// The config's value of flattened `key`; nullopt when absent.
  std::optional<std::string> config_value(const std::string& key) const;
};

/// Reads `dir`. Throws InputError (one line) when `dir` does not exist or is not a folder; every
/// missing or damaged file inside it becomes a note instead.
RunReportData read_run_report_data(const std::filesystem::path& dir);

}  // namespace ingot::train
