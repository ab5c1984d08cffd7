// ConfusionMatrix: argmax of logits through the op set (so logits may live on any device), counts
// on the host, and the two renderings (text table, JSON).
#include "ingot/train/confusion_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/data/fashion_mnist.h"
#include "ingot/ops/reduce.h"

namespace ingot::train {

ConfusionMatrix::ConfusionMatrix(int64_t num_classes, std::vector<std::string> class_names)
    : num_classes_(num_classes), names_(std::move(class_names)) {
  INGOT_CHECK(num_classes > 0 && num_classes <= 100000, "ConfusionMatrix: {} classes; expected 1 to 100000",
              num_classes);
  INGOT_CHECK(names_.empty() || static_cast<int64_t>(names_.size()) == num_classes,
              "ConfusionMatrix: {} class names for {} classes", names_.size(), num_classes);
  counts_.assign(static_cast<size_t>(num_classes * num_classes), 0);
}

ConfusionMatrix ConfusionMatrix::fashion_mnist() {
  return ConfusionMatrix(10, std::vector<std::string>(data::kFashionMnistClasses.begin(), data::kFashionMnistClasses.end()));
}

void ConfusionMatrix::add(const Tensor& logits, const Tensor& targets) {
  INGOT_CHECK_SHAPE(logits.dim() == 2 && logits.size(1) == num_classes_,
                    "ConfusionMatrix::add: logits {} should be [N, {}]", logits.shape().str(), num_classes_);
  INGOT_CHECK_SHAPE(targets.dim() == 1 && targets.size(0) == logits.size(0),
                    "ConfusionMatrix::add: targets {} should be [{}] to match logits {}", targets.shape().str(),
                    logits.size(0), logits.shape().str());
  INGOT_CHECK_AS(is_integral(targets.dtype()), DTypeError,
                 "ConfusionMatrix::add: targets are {}; expected integer labels", dtype_name(targets.dtype()));
  if (logits.size(0) == 0) return;
  NoGradGuard no_grad;  // evaluation bookkeeping is never part of a graph
  const std::vector<int64_t> predicted = argmax(logits, 1).to_vector<int64_t>();
  const std::vector<int64_t> labels = targets.to_vector<int64_t>();
  for (size_t i = 0; i < labels.size(); ++i) {
    INGOT_CHECK_AS(labels[i] >= 0 && labels[i] < num_classes_, InputError,
                   "ConfusionMatrix::add: label {} of sample {} is outside [0, {})", labels[i], i, num_classes_);
  }
  for (size_t i = 0; i < labels.size(); ++i) ++counts_[static_cast<size_t>(labels[i] * num_classes_ + predicted[i])];
}

void ConfusionMatrix::add(int64_t target, int64_t predicted, int64_t count) {
  INGOT_CHECK_AS(target >= 0 && target < num_classes_ && predicted >= 0 && predicted < num_classes_, InputError,
                 "ConfusionMatrix::add: class pair ({}, {}) is outside [0, {})", target, predicted, num_classes_);
  counts_[static_cast<size_t>(target * num_classes_ + predicted)] += count;
}

void ConfusionMatrix::merge(const ConfusionMatrix& other) {
  INGOT_CHECK(other.num_classes_ == num_classes_, "ConfusionMatrix::merge: {} classes into {}", other.num_classes_,
              num_classes_);
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

void ConfusionMatrix::reset() { std::fill(counts_.begin(), counts_.end(), 0); }

int64_t ConfusionMatrix::count(int64_t target, int64_t predicted) const {
  INGOT_CHECK(target >= 0 && target < num_classes_ && predicted >= 0 && predicted < num_classes_,
              "ConfusionMatrix::count: class pair ({}, {}) is outside [0, {})", target, predicted, num_classes_);
  return counts_[static_cast<size_t>(target * num_classes_ + predicted)];
}

int64_t ConfusionMatrix::total() const {
  int64_t n = 0;
  for (int64_t c : counts_) n += c;
  return n;
}

int64_t ConfusionMatrix::correct() const {
  int64_t n = 0;
  for (int64_t k = 0; k < num_classes_; ++k) n += counts_[static_cast<size_t>(k * num_classes_ + k)];
  return n;
}

double ConfusionMatrix::accuracy() const {
  const int64_t n = total();
  return n > 0 ? static_cast<double>(correct()) / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> ConfusionMatrix::per_class_accuracy() const {
  std::vector<double> acc(static_cast<size_t>(num_classes_));
  for (int64_t t = 0; t < num_classes_; ++t) {
    int64_t row = 0;
    for (int64_t p = 0; p < num_classes_; ++p) row += counts_[static_cast<size_t>(t * num_classes_ + p)];
    const auto diag = static_cast<double>(counts_[static_cast<size_t>(t * num_classes_ + t)]);
    acc[static_cast<size_t>(t)] = row > 0 ? diag / static_cast<double>(row) : std::numeric_limits<double>::quiet_NaN();
  }
  return acc;
}

std::string ConfusionMatrix::table() const {
  const int64_t largest = *std::max_element(counts_.begin(), counts_.end());
  const int width = std::max<int>(static_cast<int>(fmt::format("{}", largest).size()),
                                  static_cast<int>(fmt::format("{}", num_classes_ - 1).size())) +
                    1;
  std::vector<std::string> labels;
  size_t label_width = std::string_view("true \\ predicted").size();
  for (int64_t t = 0; t < num_classes_; ++t) {
    labels.push_back(names_.empty() ? fmt::format("{}", t) : fmt::format("{} {}", t, names_[static_cast<size_t>(t)]));
    label_width = std::max(label_width, labels.back().size());
  }
  std::string out = fmt::format("{:<{}}", "true \\ predicted", label_width);
  for (int64_t p = 0; p < num_classes_; ++p) out += fmt::format("{:>{}}", p, width);
  out += "     acc\n";
  const std::vector<double> acc = per_class_accuracy();
  for (int64_t t = 0; t < num_classes_; ++t) {
    out += fmt::format("{:<{}}", labels[static_cast<size_t>(t)], label_width);
    for (int64_t p = 0; p < num_classes_; ++p) {
      out += fmt::format("{:>{}}", counts_[static_cast<size_t>(t * num_classes_ + p)], width);
    }
    const double a = acc[static_cast<size_t>(t)];
    out += std::isnan(a) ? std::string("       -\n") : fmt::format("  {:5.1f}%\n", 100.0 * a);
  }
  const double a = accuracy();
  out += std::isnan(a) ? std::string("accuracy - (no samples)\n")
                       : fmt::format("accuracy {:.2f}% ({}/{})\n", 100.0 * a, correct(), total());
  return out;
}

std::string ConfusionMatrix::to_json() const {
  using Json = nlohmann::ordered_json;
  const auto number = [](double v) { return std::isnan(v) ? Json(nullptr) : Json(v); };
  Json j = Json::object();
  j["num_classes"] = num_classes_;
  j["classes"] = names_;
  Json rows = Json::array();
  for (int64_t t = 0; t < num_classes_; ++t) {
    const auto begin = counts_.begin() + t * num_classes_;
    rows.push_back(std::vector<int64_t>(begin, begin + num_classes_));
  }
  j["matrix"] = std::move(rows);
  j["total"] = total();
  j["correct"] = correct();
  j["accuracy"] = number(accuracy());
  Json per_class = Json::array();
  for (double v : per_class_accuracy()) per_class.push_back(number(v));
  j["per_class_accuracy"] = std::move(per_class);
  return j.dump();
}

}  // namespace ingot::train
