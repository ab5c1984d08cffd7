// CsvLog: metrics records as CSV rows; the cells use fmt's shortest round-trip form for numbers.
#include "ingot/train/csv_log.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/io/atomic_write.h"

namespace ingot::train {
namespace {

constexpr const char* kColumns[] = {"event", "epoch", "step", "time", "loss", "lr", "accuracy", "images_per_s", "split"};
constexpr size_t kNumColumns = sizeof kColumns / sizeof kColumns[0];

std::string cell(const Record::Value* v) {
  if (v == nullptr) return "";
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, RawJson>) {
          return "";
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (x.find_first_of(",\"\n") == std::string::npos) return x;
          std::string quoted = "\"";
          for (char c : x) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
          return quoted + "\"";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "1" : "0";
        } else {
          return fmt::format("{}", x);
        }
      },
      *v);
}

/// The step of a data row (its third cell), or nullopt for a row that does not have one.
std::optional<int64_t> row_step(const std::string& row) {
  const size_t a = row.find(','), b = a == std::string::npos ? a : row.find(',', a + 1);
  const size_t c = b == std::string::npos ? b : row.find(',', b + 1);
  if (c == std::string::npos) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t step = std::stoll(row.substr(b + 1, c - b - 1), &used);
    return used == c - b - 1 ? std::optional<int64_t>(step) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

const char* CsvLog::header() { return "event,epoch,step,time,loss,lr,accuracy,images_per_s,split"; }

CsvLog::CsvLog(std::filesystem::path path, std::optional<int64_t> resume_step) : path_(std::move(path)) {
  bool start = !resume_step || !std::filesystem::exists(path_);
  require_regular_file(path_);  // (a FIFO would block the open below)
  if (!start) {
    const std::string text = InputFile(path_).read_all(UINT64_MAX, "a CSV log");
    std::istringstream lines(text);
    std::ostringstream kept;
    std::string row;
    const bool has_header = std::getline(lines, row) && row == header();
    // Rows end with a newline; a torn last row (a kill mid-write) has none and is dropped.
    for (size_t at = row.size() + 1; has_header && std::getline(lines, row); at += row.size() + 1) {
      const bool complete = at + row.size() < text.size();
      const std::optional<int64_t> step = row_step(row);
      if (complete && step && *step <= *resume_step) kept << row << "\n";
    }
    if (has_header)
      io::atomic_write(path_, std::string(header()) + "\n" + kept.str());
    else
      start = true;  // not a metrics.csv of ours: start over
  }
  file_.open(path_, std::ios::binary | (start ? std::ios::trunc : std::ios::app));
  INGOT_CHECK_AS(file_.good(), InputError, "{}: cannot open the CSV log: {}", path_.string(), std::strerror(errno));
  if (start) file_ << header() << "\n";
  flush();
}

void CsvLog::write(const Record& record) {
  const std::string event = record.event();
  if (event != "train_step" && event != "epoch" && event != "eval") return;
  std::string row;
  for (size_t i = 0; i < kNumColumns; ++i) {
    if (i > 0) row += ',';
    row += cell(record.find(kColumns[i]));
  }
  file_ << row << "\n";
}

void CsvLog::flush() {
  file_.flush();
  INGOT_CHECK(file_.good(), "{}: writing the CSV log failed: {}", path_.string(), std::strerror(errno));
}

}  // namespace ingot::train
