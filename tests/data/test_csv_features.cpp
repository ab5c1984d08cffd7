// csv_features (what `ingot predict` reads from a CSV file): the feature columns of a table, the
// run's label column left out when it is there, and one error line for a table of another width.
#include <catch2/catch.hpp>

#include <fstream>

#include "data_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/csv_dataset.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;
using test::TempDir;

TEST_CASE("csv features: the label column is left out when the table has it", "[data][csv]") {
  TempDir dir;
  std::ofstream(dir.file("t.csv")) << "kind,a,b\ncat,1,2\ndog,3.5,-4\n";
  const CsvOptions o = csv_options(YAML::Load("{label: kind}"));
  CHECK(csv_features(dir.file("t.csv"), o, 2) == std::vector<float>{1.0f, 2.0f, 3.5f, -4.0f});
}

TEST_CASE("csv features: a table of features only is read whole", "[data][csv]") {
  TempDir dir;
  std::ofstream(dir.file("t.csv")) << "1;2\n3;4\n";
  const CsvOptions o = csv_options(YAML::Load("{header: false, delimiter: ';'}"));
  CHECK(csv_features(dir.file("t.csv"), o, 2) == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
}

TEST_CASE("csv features: a table of another width is one error naming the file", "[data][csv]") {
  TempDir dir;
  std::ofstream(dir.file("t.csv")) << "a,b,c,d\n1,2,3,4\n";
  CHECK_THAT(test::input_error_of([&] { csv_features(dir.file("t.csv"), CsvOptions{}, 2); }),
             Contains(dir.file("t.csv") + ": 4 columns, but the model takes 2 features"));
  CHECK_THROWS_WITH(csv_options(YAML::Load("{delimiter: ab}")), Contains("one character"));
}
