// ConfusionMatrix: counts from logits and labels, accuracy, per-class accuracy, table and JSON,
// and the errors for bad shapes, dtypes and labels.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/train/confusion_matrix.h"

using ingot::Shape;
using ingot::Tensor;
using ingot::train::ConfusionMatrix;

TEST_CASE("ConfusionMatrix: counts, accuracy and per-class accuracy", "[train][confusion]") {
  ConfusionMatrix cm(3, {"cat", "dog", "bird"});
  // Rows of logits; the argmax is the prediction (ties: the first maximum, like torch.argmax).
  const Tensor logits = Tensor::from_vector<float>({2.0f, 1.0f, 0.0f,      // -> 0
                                                    0.0f, 3.0f, 1.0f,      // -> 1
                                                    5.0f, 5.0f, 1.0f,      // -> 0 (tie)
                                                    -1.0f, -2.0f, -0.5f},  // -> 2
                                                   Shape({4, 3}));
  const Tensor targets = Tensor::from_vector<int64_t>({0, 1, 1, 0}, Shape({4}));
  cm.add(logits, targets);
  CHECK(cm.total() == 4);
  CHECK(cm.correct() == 2);
  CHECK(cm.count(0, 0) == 1);
  CHECK(cm.count(1, 1) == 1);
  CHECK(cm.count(1, 0) == 1);
  CHECK(cm.count(0, 2) == 1);
  CHECK(cm.accuracy() == 0.5);
  const std::vector<double> per_class = cm.per_class_accuracy();
  CHECK(per_class[0] == 0.5);
  CHECK(per_class[1] == 0.5);
  CHECK(std::isnan(per_class[2]));  // no bird in the targets

  ConfusionMatrix more(3);
  more.add(2, 2, 6);
  cm.merge(more);
  CHECK(cm.total() == 10);
  CHECK(cm.accuracy() == 0.8);
  CHECK(cm.per_class_accuracy()[2] == 1.0);
  cm.reset();
  CHECK(cm.total() == 0);
  CHECK(std::isnan(cm.accuracy()));
}

TEST_CASE("ConfusionMatrix: table and JSON", "[train][confusion]") {
  ConfusionMatrix cm(2, {"no", "yes"});
  cm.add(0, 0, 90);
  cm.add(0, 1, 10);
  cm.add(1, 1, 150);
  cm.add(1, 0, 50);
  CHECK(cm.table() ==
        "true \\ predicted   0   1     acc\n"
        "0 no              90  10   90.0%\n"
        "1 yes             50 150   75.0%\n"
        "accuracy 80.00% (240/300)\n");

  const nlohmann::json j = nlohmann::json::parse(cm.to_json());
  CHECK(j["num_classes"] == 2);
  CHECK(j["classes"] == nlohmann::json({"no", "yes"}));
  CHECK(j["matrix"] == nlohmann::json({{90, 10}, {50, 150}}));
  CHECK(j["total"] == 300);
  CHECK(j["correct"] == 240);
  CHECK(j["accuracy"].get<double>() == Approx(0.8));
  CHECK(j["per_class_accuracy"][1].get<double>() == 0.75);

  ConfusionMatrix empty(2);
  const nlohmann::json e = nlohmann::json::parse(empty.to_json());
  CHECK(e["accuracy"].is_null());
  CHECK(e["per_class_accuracy"][0].is_null());
  CHECK(empty.table().find("accuracy - (no samples)") != std::string::npos);
}

TEST_CASE("ConfusionMatrix: Fashion-MNIST names", "[train][confusion]") {
  const ConfusionMatrix cm = ConfusionMatrix::fashion_mnist();
  REQUIRE(cm.num_classes() == 10);
  CHECK(cm.class_names().front() == "T-shirt/top");
  CHECK(cm.class_names()[6] == "Shirt");
  CHECK(cm.class_names().back() == "Ankle boot");
  CHECK(cm.table().find("9 Ankle boot") != std::string::npos);
}

TEST_CASE("ConfusionMatrix: bad shapes, dtypes and labels are refused", "[train][confusion]") {
  ConfusionMatrix cm(3);
  const Tensor logits = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  CHECK_THROWS_AS(cm.add(logits, Tensor::from_vector<int64_t>({0, 1, 2}, Shape({3}))), ingot::ShapeError);
  CHECK_THROWS_AS(
      cm.add(Tensor::from_vector<float>({1, 2, 3, 4}, Shape({2, 2})), Tensor::from_vector<int64_t>({0, 1}, Shape({2}))),
      ingot::ShapeError);
  CHECK_THROWS_AS(cm.add(logits, Tensor::from_vector<float>({0, 1}, Shape({2}))), ingot::DTypeError);
  CHECK_THROWS_AS(cm.add(logits, Tensor::from_vector<int64_t>({0, 3}, Shape({2}))), ingot::InputError);
  CHECK_THROWS_AS(cm.add(logits, Tensor::from_vector<int64_t>({-1, 0}, Shape({2}))), ingot::InputError);
  CHECK(cm.total() == 0);  // a refused batch adds nothing
  CHECK_THROWS_AS(ConfusionMatrix(3, {"a", "b"}), ingot::Error);
  CHECK_THROWS_AS(cm.merge(ConfusionMatrix(4)), ingot::Error);
}
