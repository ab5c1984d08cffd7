// TensorBoardWriter: metrics records to scalar events, appended as TFRecords to one event file
// per process start (a resumed run adds a file; TensorBoard reads every file of the folder).
#include "ingot/train/tensorboard_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "ingot/base/error.h"
#include "ingot/train/tensorboard_event.h"

namespace ingot::train {
namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

TensorBoardWriter::TensorBoardWriter(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  INGOT_CHECK_AS(!ec, InputError, "{}: cannot create the TensorBoard folder: {}", dir.string(), ec.message());
  const double now = unix_time_now();
  path_ = dir / fmt::format("events.out.tfevents.{}.{}", static_cast<int64_t>(now), host_name());
  file_.open(path_, std::ios::binary | std::ios::app);
  INGOT_CHECK_AS(file_.good(), InputError, "{}: cannot open the TensorBoard event file: {}", path_.string(),
                 std::strerror(errno));
  append(tensorboard::file_version_event(now));
  flush();
}

void TensorBoardWriter::write(const Record& record) {
  const std::string event = record.event();
  if (event == "train_step") {
    scalar(record, "loss", "train/loss");
    scalar(record, "lr", "train/lr");
    scalar(record, "images_per_s", "train/images_per_s");
  } else if (event == "eval") {
    const Record::Value* split = record.find("split");
    const bool validation = split != nullptr && std::holds_alternative<std::string>(*split) &&
                            std::get<std::string>(*split) == "validation";
    scalar(record, "loss", validation ? "validation/loss" : "eval/loss");
    scalar(record, "accuracy", validation ? "validation/accuracy" : "eval/accuracy");
    scalar(record, "perplexity", validation ? "validation/perplexity" : "eval/perplexity");  // language models
  } else if (event == "epoch") {
    scalar(record, "loss", "epoch/loss");
  }
}

void TensorBoardWriter::flush() {
  file_.flush();
  INGOT_CHECK(file_.good(), "{}: writing TensorBoard events failed: {}", path_.string(), std::strerror(errno));
}

void TensorBoardWriter::scalar(const Record& record, const char* field, std::string_view tag) {
  const std::optional<double> value = record.number(field);
  if (!value) return;
  const double time = record.number("time").value_or(unix_time_now());
  const auto step = static_cast<int64_t>(record.number("step").value_or(0.0));
  append(tensorboard::scalar_event(time, step, tag, static_cast<float>(*value)));
}

void TensorBoardWriter::append(const std::string& event) {
  const std::string record = tensorboard::tf_record(event);
  file_.write(record.data(), static_cast<std::streamsize>(record.size()));
}

}  // namespace ingot::train
