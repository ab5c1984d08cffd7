// CsvLog: a MetricsSink writing runs/<name>/metrics.csv, one row per train_step, epoch and eval
// record (event, epoch, step, time, loss, lr, accuracy, images_per_s), for spreadsheets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "ingot/train/metrics_log.h"

namespace ingot::train {

class CsvLog final : public MetricsSink {
 public:
  /// The header line (no newline).
  static const char* header();

  /// A new run (`resume_step` empty) starts the file with the header. A resumed run keeps the
  /// rows up to `resume_step` (those of later steps are redone; a torn last row is dropped) and
  /// appends; a file that is not there yet is started with the header. Throws InputError when
  /// the file cannot be written.
  CsvLog(std::filesystem::path path, std::optional<int64_t> resume_step);

  /// One row for a train_step, epoch or eval record (an empty cell for each column the record
  /// lacks); other events are skipped.
  void write(const Record& record) override;
  void flush() override;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ofstream file_;
};

}  // namespace ingot::train
