// TensorBoardWriter: a MetricsSink that writes the run's scalars (train/loss, train/lr,
// train/images_per_s, eval/loss, eval/accuracy, epoch/loss) to a TensorBoard event file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "ingot/train/metrics_log.h"

namespace ingot::train {

class TensorBoardWriter final : public MetricsSink {
 public:
  /// Creates `dir` if needed and a new file events.out.tfevents.<unix seconds>.<host> in it,
  /// starting with the file_version event. Throws InputError when it cannot be written.
  explicit TensorBoardWriter(const std::filesystem::path& dir);

  /// train_step, eval and epoch records become scalar events at the record's step and "time";
  /// other events (and fields a record lacks) are skipped.
  void write(const Record& record) override;
  /// Pushes the buffered events to the file, so TensorBoard sees them while the run goes on.
  void flush() override;

  const std::filesystem::path& path() const { return path_; }

 private:
  void scalar(const Record& record, const char* field, std::string_view tag);
  void append(const std::string& event);
  std::filesystem::path path_;
  std::ofstream file_;
};

}  // namespace ingot::train
