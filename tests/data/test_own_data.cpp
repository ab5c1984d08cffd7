// Own data: the csv and npy dataset types on small files written here (.npy by a minimal writer,
// .npz as zip files with stored and deflated members), values read back exactly, and one error
// line naming the file for each kind of bad input.
#include <sys/stat.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

#include "data_test_util.h"
#include "ingot/data/csv_dataset.h"
#include "ingot/data/data_config.h"
#include "ingot/data/npy.h"
#include "ingot/data/npy_dataset.h"

using namespace ingot;
using namespace ingot::data;
using test::TempDir;

namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<float> sample_of(const Dataset& d, int64_t i, int64_t* label = nullptr) {
  std::vector<float> out(static_cast<size_t>(d.sample_numel()));
  const int64_t l = d.read(i, out.data());
  if (label) *label = l;
  return out;
}

/// A .npy file's bytes: version 1.0 header padded to 64 bytes, then `data` as given.
std::vector<uint8_t> npy_bytes(const std::string& descr, const std::string& shape, const void* data, size_t bytes,
                               const std::string& fortran = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string text = "\x93NUMPY";
  text += {'\x01', '\x00', static_cast<char>(header.size() & 0xFF), static_cast<char>(header.size() >> 8)};
  text += header;
  text.append(static_cast<const char*>(data), bytes);
  return std::vector<uint8_t>(text.begin(), text.end());
}

template <class T>
std::vector<uint8_t> npy_of(const std::string& descr, const std::string& shape, const std::vector<T>& v) {
  return npy_bytes(descr, shape, v.data(), v.size() * sizeof(T));
}

void put(std::vector<uint8_t>& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

/// A zip of `members` (name, bytes), each deflated (raw, zlib) when `deflated`, else stored.
std::vector<uint8_t> zip_of(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& members, bool deflated) {
  std::vector<uint8_t> out, central;
  for (const auto& [name, data] : members) {
    std::vector<uint8_t> body = data;
    if (deflated) {
      z_stream s{};
      REQUIRE(deflateInit2(&s, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
      body.resize(deflateBound(&s, static_cast<uLong>(data.size())));
      s.next_in = const_cast<Bytef*>(data.data());
      s.avail_in = static_cast<uInt>(data.size());
      s.next_out = body.data();
      s.avail_out = static_cast<uInt>(body.size());
      REQUIRE(::deflate(&s, Z_FINISH) == Z_STREAM_END);
      body.resize(s.total_out);
      deflateEnd(&s);
    }
    const uint32_t crc = static_cast<uint32_t>(crc32(0, data.data(), static_cast<uInt>(data.size())));
    const size_t offset = out.size();
    const auto common = [&](std::vector<uint8_t>& h) {
      put(h, 20, 2), put(h, 0, 2), put(h, deflated ? 8 : 0, 2), put(h, 0, 4), put(h, crc, 4);
      put(h, body.size(), 4), put(h, data.size(), 4), put(h, name.size(), 2), put(h, 0, 2);
    };
    put(out, 0x04034b50, 4), common(out);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), body.begin(), body.end());
    put(central, 0x02014b50, 4), put(central, 20, 2), common(central);
    put(central, 0, 2), put(central, 0, 2), put(central, 0, 2), put(central, 0, 4), put(central, offset, 4);
    central.insert(central.end(), name.begin(), name.end());
  }
  const size_t cd_offset = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put(out, 0x06054b50, 4), put(out, 0, 4), put(out, members.size(), 2), put(out, members.size(), 2);
  put(out, central.size(), 4), put(out, cd_offset, 4), put(out, 0, 2);
  return out;
}

const std::vector<float> kX = {0.5f, -1.25f, 3.0f, 1e-3f, 7.75f, -0.0625f};  // 3 samples x 2 features
const std::vector<int64_t> kY = {2, 0, 1};

/// Writes train/test .npy files (x float32 [3, 2], y int64 [3]) and returns the sources.
std::pair<NpySource, NpySource> npy_files(const TempDir& dir) {
  test::write_plain(dir.file("x.npy"), npy_of("<f4", "(3, 2)", kX));
  test::write_plain(dir.file("y.npy"), npy_of("<i8", "(3,)", kY));
  const NpySource s{dir.file("x.npy"), dir.file("y.npy"), ""};
  return {s, s};
}

std::string config_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return "";
}

}  // namespace

TEST_CASE("csv: numeric columns become [F, 1, 1] samples, integer labels class numbers", "[data][own]") {
  TempDir dir;
  write_text(dir.file("a.csv"), "f1,f2,f3,y\n0.5,-2,1e-3,1\n\n+3.25, 4 ,5,0\r\n-0.125,6,7,3\n");
  const DatasetSplits s = csv_datasets(dir.file("a.csv"), dir.file("a.csv"), CsvOptions{}, Normalize{{}, {}});
  REQUIRE(s.train->size() == 3);
  CHECK(s.train->sample_shape() == Shape{3, 1, 1});
  CHECK(s.train->num_classes() == 4);
  CHECK(s.class_names.empty());
  int64_t label = -1;
  CHECK(sample_of(*s.train, 0, &label) == std::vector<float>{0.5f, -2.0f, 1e-3f});
  CHECK(label == 1);
  CHECK(sample_of(*s.train, 1, &label) == std::vector<float>{3.25f, 4.0f, 5.0f});
  CHECK(label == 0);
  CHECK(sample_of(*s.test, 2, &label) == std::vector<float>{-0.125f, 6.0f, 7.0f});
  CHECK(label == 3);
}

TEST_CASE("csv: string labels are classes in sorted order, from any column, any delimiter", "[data][own]") {
  TempDir dir;
  write_text(dir.file("train.csv"), "a;species;b\n1;virginica;2\n3;\"setosa\";4\n5;versicolor;6\n");
  write_text(dir.file("test.csv"), "a;species;b\n7;setosa;8\n");
  CsvOptions o;
  o.label = "species";
  o.delimiter = ';';
  const DatasetSplits s = csv_datasets(dir.file("train.csv"), dir.file("test.csv"), o, Normalize{{}, {}});
  CHECK(s.class_names == std::vector<std::string>{"setosa", "versicolor", "virginica"});
  int64_t label = -1;
  CHECK(sample_of(*s.train, 0, &label) == std::vector<float>{1.0f, 2.0f});
  CHECK(label == 2);
  sample_of(*s.test, 0, &label);
  CHECK(label == 0);
  // No header: columns are named by 0-based index, and the label index may count from the end.
  write_text(dir.file("plain.csv"), "1,0,9\n2,1,8\n");
  o = CsvOptions{};
  o.header = false;
  o.label = "1";
  const DatasetSplits p = csv_datasets(dir.file("plain.csv"), dir.file("plain.csv"), o, Normalize{{}, {}});
  CHECK(sample_of(*p.train, 1, &label) == std::vector<float>{2.0f, 8.0f});
  CHECK(label == 1);
}

TEST_CASE("csv: a validation file is the run's validation split, its classes counted with the others",
          "[data][own][validation]") {
  TempDir dir;
  write_text(dir.file("train.csv"), "x,kind\n1,b\n2,c\n");
  write_text(dir.file("test.csv"), "x,kind\n3,b\n");
  write_text(dir.file("val.csv"), "x,kind\n4,a\n5,c\n");  // "a" appears only here
  const YAML::Node node = YAML::Load(fmt::format(
      "{{dataset: csv, workers: 0, validation: {{fraction: 0.5}}, csv: {{train: '{0}', test: '{1}', validation: "
      "'{2}', label: kind}}}}",
      dir.file("train.csv"), dir.file("test.csv"), dir.file("val.csv")));
  data_schema().validate(node, "d.yaml", "data");
  const DataLoaders loaders = make_data_loaders(parse_data_config(node, "d.yaml"), 0);
  CHECK(loaders.class_names == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(loaders.validation != nullptr);
  CHECK(loaders.validation->dataset().size() == 2);  // the file, not a fraction of train
  CHECK(loaders.train->dataset().size() == 2);
  int64_t label = -1;
  CHECK(sample_of(loaders.validation->dataset(), 0, &label) == std::vector<float>{4.0f});
  CHECK(label == 0);
  // Columns that differ from train's are refused, naming the file.
  write_text(dir.file("val.csv"), "y,kind\n4,a\n");
  CHECK_THROWS_WITH(csv_datasets(dir.file("train.csv"), dir.file("test.csv"), CsvOptions{"kind"}, Normalize{{}, {}},
                                 dir.file("val.csv")),
                    Catch::Matchers::Contains("val.csv has columns y, kind"));
}

TEST_CASE("csv: data.normalize applies per feature, through the config and the loaders", "[data][own]") {
  TempDir dir;
  write_text(dir.file("d.csv"), "x,y,label\n1,10,0\n3,30,1\n");
  const YAML::Node node = YAML::Load(fmt::format(
      "{{dataset: csv, workers: 0, csv: {{train: '{0}', test: '{0}'}}, normalize: {{mean: [1, 10], std: [2, 10]}}}}",
      dir.file("d.csv")));
  data_schema().validate(node, "d.yaml", "data");
  const DataLoaders l = make_data_loaders(parse_data_config(node, "d.yaml"), 1);
  CHECK(sample_of(l.test->dataset(), 1) == std::vector<float>{1.0f, 2.0f});
  CHECK(l.test->dataset().pad_value(1) == -1.0f);
  REQUIRE_THROWS_WITH(
      data_schema().validate(YAML::Load("{dataset: csv, csv: {train: a, test: b, labl: y}}"), "d.yaml", "data"),
      Catch::Contains("unknown key 'labl' in data.csv"));
}

TEST_CASE("csv: a bad value, row or label column gives one line naming file, row and column", "[data][own]") {
  TempDir dir;
  const std::string f = dir.file("iris.csv");
  const auto load = [&](const std::string& text, CsvOptions o = {}) {
    write_text(f, text);
    csv_datasets(f, f, o, Normalize{{}, {}});
  };
  std::string header = "sepal,petal_width,species\n";
  std::string rows;
  for (int i = 0; i < 15; ++i) rows += "1,2,a\n";
  CHECK(test::input_error_of([&] { load(header + rows + "1,abc,b\n"); }) ==
        "data.csv: " + f + " row 17, column petal_width: 'abc' is not a number");
  CHECK(test::input_error_of([&] { load(header + "1,,a\n"); }) ==
        "data.csv: " + f + " row 2, column petal_width: '' is not a number");
  CHECK(test::input_error_of([&] { load(header + "1,nan,a\n"); }) ==
        "data.csv: " + f + " row 2, column petal_width: 'nan' is not a finite number");
  CHECK(test::input_error_of([&] { load(header + "1,2,a\n1,2\n"); }) ==
        "data.csv: " + f + " row 3: 2 columns, expected 3 (delimiter ',')");
  CHECK(test::input_error_of([&] { load(header + "1,2,-1\n"); }) ==
        "data.csv: " + f + " row 2, column species: class number -1 is negative; use 0..K-1 or class names");
  CHECK(test::input_error_of([&] { load(header); }) == "data.csv: " + f + ": no data rows");
  CHECK(test::input_error_of([&] {
          csv_datasets(f + ".missing", f, {}, Normalize{{}, {}});
        }).find("data.csv: " + f + ".missing: no such file; check data.csv.train / test") == 0);
  CsvOptions o;
  o.label = "kind";
  CHECK_THAT(config_error_of([&] { load(header + "1,2,a\n", o); }),
             Catch::Contains("no column 'kind' in " + f) && Catch::Contains("sepal, petal_width, species"));
  write_text(dir.file("other.csv"), "sepal,petal,species\n1,2,a\n");
  CHECK_THAT(test::input_error_of([&] {
               csv_datasets(f, dir.file("other.csv"), {}, Normalize{{}, {}});
             }),
             Catch::Contains("the files must have the same columns"));
}

TEST_CASE("npy: float32, float64 and uint8 arrays read back exactly with int labels", "[data][own]") {
  TempDir dir;
  auto [train, test] = npy_files(dir);
  const DatasetSplits s = npy_datasets(train, test, {}, Normalize{{}, {}});
  CHECK(s.train->sample_shape() == Shape{2, 1, 1});
  CHECK(s.train->num_classes() == 3);
  CHECK(s.class_names.empty());
  int64_t label = -1;
  CHECK(sample_of(*s.train, 1, &label) == std::vector<float>{3.0f, 1e-3f});
  CHECK(label == 0);
  // float64 [N, H, W] -> [1, H, W]; uint8 [N, C, H, W] scaled by 1/255; int32 and uint8 labels.
  const std::vector<double> x64 = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
  test::write_plain(dir.file("x64.npy"), npy_of("<f8", "(2, 2, 2)", x64));
  test::write_plain(dir.file("y32.npy"), npy_of("<i4", "(2,)", std::vector<int32_t>{1, 0}));
  const std::vector<uint8_t> x8 = {0, 51, 255, 102, 1, 2, 3, 4};
  test::write_plain(dir.file("x8.npy"), npy_of("|u1", "(2, 1, 2, 2)", x8));
  test::write_plain(dir.file("y8.npy"), npy_of("|u1", "(2,)", std::vector<uint8_t>{0, 1}));
  const DatasetSplits m = npy_datasets({dir.file("x64.npy"), dir.file("y32.npy"), ""},
                                       {dir.file("x8.npy"), dir.file("y8.npy"), ""}, {"no", "yes"}, Normalize{{}, {}});
  CHECK(m.train->sample_shape() == Shape{1, 2, 2});
  CHECK(sample_of(*m.train, 1, &label) == std::vector<float>{0.5f, 0.6f, 0.7f, 0.8f});
  CHECK(label == 0);
  CHECK(sample_of(*m.test, 0, &label) == std::vector<float>{0.0f, 51 / 255.0f, 1.0f, 102 / 255.0f});
  CHECK(m.class_names == std::vector<std::string>{"no", "yes"});
}

TEST_CASE("npy: validation files (.npy pair or .npz) are the run's validation split", "[data][own][validation]") {
  TempDir dir;
  const auto x = npy_of("<f4", "(3, 2)", kX);
  const auto y = npy_of("<i8", "(3,)", kY);
  test::write_plain(dir.file("x.npy"), x);
  test::write_plain(dir.file("y.npy"), y);
  test::write_plain(dir.file("d.npz"), zip_of({{"x.npy", x}, {"y.npy", y}}, false));
  const std::vector<float> vx = {9.0f, 8.0f};
  test::write_plain(dir.file("vx.npy"), npy_of("<f4", "(1, 2)", vx));
  test::write_plain(dir.file("vy.npy"), npy_of("<i8", "(1,)", std::vector<int64_t>{4}));  // class 4: K grows to 5
  test::write_plain(dir.file("v.npz"), zip_of({{"x.npy", npy_of("<f4", "(1, 2)", vx)},
                                               {"y.npy", npy_of("<i8", "(1,)", std::vector<int64_t>{4})}},
                                              false));
  for (const std::string& section :
       {fmt::format("{{train_x: '{0}', train_y: '{1}', test_x: '{0}', test_y: '{1}', validation_x: '{2}', "
                    "validation_y: '{3}'}}",
                    dir.file("x.npy"), dir.file("y.npy"), dir.file("vx.npy"), dir.file("vy.npy")),
        fmt::format("{{train: '{0}', test: '{0}', validation: '{1}'}}", dir.file("d.npz"), dir.file("v.npz"))}) {
    INFO(section);
    const YAML::Node node = YAML::Load("{dataset: npy, workers: 0, npy: " + section + "}");
    data_schema().validate(node, "d.yaml", "data");
    const DataLoaders l = make_data_loaders(parse_data_config(node, "d.yaml"), 1);
    REQUIRE(l.validation != nullptr);
    int64_t label = -1;
    CHECK(sample_of(l.validation->dataset(), 0, &label) == vx);
    CHECK(label == 4);
    CHECK(l.train->dataset().num_classes() == 5);
  }
  const YAML::Node half = YAML::Load(fmt::format(
      "{{dataset: npy, npy: {{train_x: '{0}', train_y: '{1}', test_x: '{0}', test_y: '{1}', validation_x: '{0}'}}}}",
      dir.file("x.npy"), dir.file("y.npy")));
  CHECK_THROWS_WITH(make_data_loaders(parse_data_config(half, "d.yaml"), 1),
                    Catch::Contains("give both validation_x and validation_y"));
}

TEST_CASE("npz: stored and deflated members, member names from the config", "[data][own]") {
  TempDir dir;
  const auto x = npy_of("<f4", "(3, 2)", kX);
  const auto y = npy_of("<i8", "(3,)", kY);
  test::write_plain(dir.file("stored.npz"), zip_of({{"features.npy", x}, {"labels.npy", y}}, false));
  test::write_plain(dir.file("deflated.npz"), zip_of({{"labels.npy", y}, {"features.npy", x}}, true));
  CHECK(read_npz(dir.file("deflated.npz"), "features").data == read_npz(dir.file("stored.npz"), "features").data);
  const YAML::Node node = YAML::Load(fmt::format(
      "{{dataset: npy, workers: 0, npy: {{train: '{}', test: '{}', x: features, y: labels, classes: [a, b, c]}}}}",
      dir.file("stored.npz"), dir.file("deflated.npz")));
  data_schema().validate(node, "d.yaml", "data");
  const DataLoaders l = make_data_loaders(parse_data_config(node, "d.yaml"), 1);
  CHECK(l.class_names == std::vector<std::string>{"a", "b", "c"});
  for (const Dataset* d : {&l.train->dataset(), &l.test->dataset()}) {
    int64_t label = -1;
    CHECK(sample_of(*d, 2, &label) == std::vector<float>{7.75f, -0.0625f});
    CHECK(label == 1);
  }
  CHECK_THAT(test::input_error_of([&] { read_npz(dir.file("stored.npz"), "x"); }),
             Catch::Contains(dir.file("stored.npz") + ": no array 'x' in the .npz; it holds: features, labels"));
}

TEST_CASE("npy: bad dtypes, shapes, order and truncation give one line naming the file", "[data][own]") {
  TempDir dir;
  auto [train, test] = npy_files(dir);
  const auto error_with = [&](const std::string& name, const std::vector<uint8_t>& bytes, bool as_x) {
    test::write_plain(dir.file(name), bytes);
    NpySource s = train;
    (as_x ? s.x : s.y) = dir.file(name);
    return test::input_error_of([&] { npy_datasets(s, test, {}, Normalize{{}, {}}); });
  };
  const std::vector<int32_t> i32 = {1, 2, 3, 4, 5, 6};
  CHECK_THAT(error_with("i.npy", npy_of("<i4", "(3, 2)", i32), true),
             Catch::StartsWith("data.npy: " + dir.file("i.npy") + ": x has dtype int32; use float32"));
  CHECK_THAT(error_with("h.npy", npy_of("<f2", "(3,)", std::vector<uint16_t>{1, 2, 3}), true),
             Catch::StartsWith("data.npy: " + dir.file("h.npy") + ": unsupported dtype '<f2'"));
  CHECK_THAT(error_with("be.npy", npy_of(">f4", "(3, 2)", kX), true),
             Catch::StartsWith("data.npy: " + dir.file("be.npy") + ": big-endian dtype '>f4' is not supported"));
  CHECK_THAT(error_with("f.npy", npy_bytes("<f4", "(3, 2)", kX.data(), 24, "True"), true),
             Catch::StartsWith("data.npy: " + dir.file("f.npy") + ": fortran_order arrays are not supported"));
  CHECK(error_with("t.npy", npy_bytes("<f4", "(3, 2)", kX.data(), 20), true) ==
        "data.npy: " + dir.file("t.npy") +
            ": truncated: shape (3, 2) of float32 needs 24 bytes of data, the file has 20");
  CHECK_THAT(error_with("x1.npy", npy_of("<f4", "(6,)", kX), true),
             Catch::StartsWith("data.npy: " + dir.file("x1.npy") + ": x has shape (6); expected [N, features]"));
  CHECK_THAT(
      error_with("y2.npy", npy_of("<i8", "(2,)", std::vector<int64_t>{0, 1}), false),
      Catch::StartsWith("data.npy: " + dir.file("y2.npy") + ": y has shape (2) but x (" + train.x + ") has 3 samples"));
  CHECK_THAT(error_with("yf.npy", npy_of("<f4", "(3,)", std::vector<float>{0, 1, 2}), false),
             Catch::StartsWith("data.npy: " + dir.file("yf.npy") + ": y has dtype float32; class numbers must be"));
  CHECK_THAT(error_with("neg.npy", npy_of("<i8", "(3,)", std::vector<int64_t>{0, -1, 1}), false),
             Catch::StartsWith("data.npy: " + dir.file("neg.npy") + ": label -1 of sample 1 is outside [0, 3)"));
  CHECK_THAT(test::input_error_of([&] {
               npy_datasets(train, test, {"a", "b"}, Normalize{{}, {}});
             }),
             Catch::Contains("label 2 of sample 0 is outside [0, 2); data.npy.classes names 2 classes"));
  test::write_plain(dir.file("x4.npy"), npy_of("<f4", "(2, 3)", kX));
  test::write_plain(dir.file("y4.npy"), npy_of("<i8", "(2,)", std::vector<int64_t>{0, 1}));
  CHECK_THAT(test::input_error_of([&] {
               npy_datasets(train, {dir.file("x4.npy"), dir.file("y4.npy"), ""}, {}, {});
             }),
             Catch::Contains(dir.file("x4.npy") + ": test samples are [3, 1, 1] but the train samples"));
}

TEST_CASE("npy: a NaN or infinite sample is refused as the CSV dataset refuses it, naming file and sample",
          "[data][own]") {
  TempDir dir;
  auto [train, test] = npy_files(dir);
  std::vector<float> x = kX;
  x[3] = std::nanf("");  // sample 1, value 1
  test::write_plain(dir.file("nan.npy"), npy_of("<f4", "(3, 2)", x));
  CHECK(test::input_error_of([&] {
          npy_datasets({dir.file("nan.npy"), train.y, ""}, test, {}, {});
        }) ==
        "data.npy: " + dir.file("nan.npy") +
            ": sample 1 holds nan (its value 1 of 2): every value must be a finite number; fix or drop that sample");
  const std::vector<double> big = {0.5, 1e300, 1, 2, 3, 4};  // (a float64 past float32's range)
  test::write_plain(dir.file("inf.npy"), npy_of("<f8", "(3, 2)", big));
  CHECK_THAT(test::input_error_of([&] {
               npy_datasets({dir.file("inf.npy"), train.y, ""}, test, {}, {});
             }),
             Catch::Contains("inf.npy: sample 0 holds inf (its value 1 of 2) as float32"));
}

TEST_CASE("npy: only a regular file is read, its shape checked against its size first", "[data][own]") {
  TempDir dir;
  REQUIRE(::mkfifo(dir.file("pipe.npy").c_str(), 0600) == 0);
  CHECK_THAT(test::input_error_of([&] { read_npy(dir.file("pipe.npy")); }),
             Catch::StartsWith(dir.file("pipe.npy") + ": is a FIFO (named pipe), not a regular file"));
  CHECK_THAT(test::input_error_of([&] { read_npy("/dev/zero"); }), Catch::Contains("is a character device"));
  // A header that claims 2^30 samples in a file of a few bytes: refused before any data is read.
  test::write_plain(dir.file("claims.npy"), npy_bytes("<f4", "(1073741824, 2)", kX.data(), 24));
  CHECK_THAT(
      test::input_error_of([&] { read_npy(dir.file("claims.npy")); }),
      Catch::Contains("truncated: shape (1073741824, 2) of float32 needs 8589934592 bytes of data, the file has 24"));
}

TEST_CASE("npz: a damaged zip, a bad member and a wrong config give one line each", "[data][own]") {
  TempDir dir;
  const std::string f = dir.file("d.npz");
  std::vector<uint8_t> zip = zip_of({{"x.npy", npy_of("<f4", "(3, 2)", kX)}}, true);
  test::write_plain(f, std::vector<uint8_t>(zip.begin(), zip.begin() + 40));
  CHECK_THAT(test::input_error_of([&] { read_npz(f, "x"); }), Catch::StartsWith(f + ": not a zip file"));
  std::vector<uint8_t> bad = zip;
  bad[60] ^= 0x5A;  // inside the deflate stream
  test::write_plain(f, bad);
  CHECK_THAT(test::input_error_of([&] { read_npz(f, "x"); }),
             Catch::StartsWith(f + ": member 'x.npy': corrupt or truncated deflate data") ||
                 Catch::StartsWith(f + ": member 'x.npy' fails its CRC-32 check"));
  zip = zip_of({{"x.npy", npy_of("<f4", "(3, 2)", kX)}}, false);
  zip[30 + 5 + 128 + 2] ^= 0x01;  // local header, name, .npy header, then a data byte
  test::write_plain(f, zip);
  CHECK(test::input_error_of([&] { read_npz(f, "x"); }) ==
        f + ": member 'x.npy' fails its CRC-32 check; the file is damaged");
  zip = zip_of({{"x.npy", npy_bytes("<f4", "(3, 2)", kX.data(), 16)}}, false);
  test::write_plain(f, zip);
  CHECK(test::input_error_of([&] { read_npz(f, "x"); }) ==
        f + " (member 'x.npy'): truncated: shape (3, 2) of float32 needs 24 bytes of data, the file has 16");
  const auto cfg = [&](const std::string& npy) {
    const YAML::Node node = YAML::Load("{dataset: npy, workers: 0, npy: " + npy + "}");
    data_schema().validate(node, "d.yaml", "data");
    make_data_loaders(parse_data_config(node, "d.yaml"), 1);
  };
  CHECK_THAT(config_error_of([&] { cfg("{train: a.npz, train_x: b.npy}"); }), Catch::Contains("give either"));
  CHECK_THAT(config_error_of([&] { cfg("{train_x: a.npy, train_y: b.npy, test_x: c.npy}"); }),
             Catch::Contains("give either"));
  CHECK_THAT(config_error_of([&] { make_data_loaders(parse_data_config(YAML::Load("{dataset: csv}")), 1); }),
             Catch::Contains("data.csv: give the files"));
}
