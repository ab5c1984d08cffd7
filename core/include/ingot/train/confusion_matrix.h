// ConfusionMatrix: counts of (true class, predicted class) over an evaluation, with accuracy,
// per-class accuracy, a printable table and JSON for metrics.jsonl / summary.json.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::train {

/// Rows are true classes, columns predicted classes (sklearn's and torchmetrics' convention).
class ConfusionMatrix {
 public:
  /// `class_names` is empty (classes are shown by index) or has `num_classes` names.
  explicit ConfusionMatrix(int64_t num_classes, std::vector<std::string> class_names = {});
  /// Shortcut for Fashion-MNIST (10 classes with their names).
  static ConfusionMatrix fashion_mnist();

  /// Adds a batch: the prediction is the argmax of each row of `logits` [N, C] (any floating dtype,
  /// any device; ties go to the first maximum, like torch.argmax); `targets` [N] integer labels.
  /// Throws ShapeError for mismatched shapes and InputError for a label outside [0, C).
  void add(const Tensor& logits, const Tensor& targets);
  /// Adds `count` samples of class `target` predicted as `predicted`.
  void add(int64_t target, int64_t predicted, int64_t count = 1);
  /// Adds another matrix's counts (same number of classes).
  void merge(const ConfusionMatrix& other);
  void reset();

  int64_t num_classes() const { return num_classes_; }
  const std::vector<std::string>& class_names() const { return names_; }
  int64_t count(int64_t target, int64_t predicted) const;
  int64_t total() const;
  int64_t correct() const;
  /// correct / total; NaN when empty.
  double accuracy() const;
  /// Per class: correct / samples of that true class (recall); NaN for a class never seen.
  std::vector<double> per_class_accuracy() const;

  /// The table, one line per true class with its accuracy, then the overall accuracy; columns are
  /// predicted classes by index (names would make it too wide), rows "i name".
  std::string table() const;
  /// {"num_classes":C,"classes":[...],"matrix":[[...]],"total":N,"correct":K,"accuracy":a,
  ///  "per_class_accuracy":[...]}; NaN is written as null.
  std::string to_json() const;

 private:
  int64_t num_classes_;
  std::vector<std::string> names_;
  std::vector<int64_t> counts_;  // row-major [target][predicted]
};

}  // namespace ingot::train
