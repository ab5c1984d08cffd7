// The `csv` dataset: split lines into fields (double quotes allowed), numeric features per row,
// labels as class numbers or class names, then one InMemoryDataset per file.
#include "ingot/data/csv_dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>

#include "float_samples.h"
#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/data/data_config.h"

namespace ingot::data {
namespace {

/// One file read as text: column names, then per data row its line number and fields.
struct CsvTable {
  std::string path;
  std::string who;  ///< what messages start with: "data.csv: " for the dataset's files, "" for others
  std::vector<std::string> columns;
  std::vector<int64_t> lines;
  std::vector<std::vector<std::string>> rows;
};

constexpr const char* kDataset = "data.csv: ";

[[noreturn]] void fail(const std::string& who, const std::string& what) { throw InputError(who + what); }

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

/// Fields of one line; a field in double quotes may hold the delimiter, and "" is a quote.
std::vector<std::string> split(const std::string& line, char delimiter) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        out.back() += ch;
      }
    } else if (ch == '"' && trim(out.back()).empty()) {
      out.back().clear();
      quoted = true;
    } else if (ch == delimiter) {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  for (auto& f : out) f = trim(f);
  return out;
}

/// `who` is kDataset for the dataset's files (whose names come from data.csv), "" for a table given
/// elsewhere (ingot predict's input).
CsvTable read_table(const std::string& path, const CsvOptions& o, const std::string& who, size_t min_columns = 2) {
  std::istringstream in;
  try {  // (a regular file only: a FIFO or a device is refused, not read without end)
    in.str(InputFile(path, who.empty() ? "check the path (relative paths start at the working directory)"
                                       : "check data.csv.train / test (relative paths start at the working directory)")
               .read_all(UINT64_MAX, "a CSV file"));
  } catch (const InputError& e) {
    fail(who, e.what());
  }
  CsvTable t;
  t.path = path;
  t.who = who;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (trim(line).empty()) continue;
    std::vector<std::string> fields = split(line, o.delimiter);
    if (t.columns.empty()) {
      if (o.header) {
        t.columns = std::move(fields);
        continue;
      }
      for (size_t i = 0; i < fields.size(); ++i) t.columns.push_back(std::to_string(i));
    }
    if (fields.size() != t.columns.size())
      fail(who, fmt::format("{} row {}: {} columns, expected {} (delimiter '{}')", path, number, fields.size(),
                            t.columns.size(), o.delimiter));
    t.lines.push_back(number);
    t.rows.push_back(std::move(fields));
  }
  if (t.rows.empty()) fail(who, fmt::format("{}: no data rows", path));
  if (t.columns.size() < min_columns)
    fail(who, fmt::format("{}: one column only; a feature column and a label column are needed", path));
  return t;
}

size_t label_column(const CsvTable& t, const std::string& label) {
  if (label.empty()) return t.columns.size() - 1;
  if (const auto it = std::find(t.columns.begin(), t.columns.end(), label); it != t.columns.end())
    return static_cast<size_t>(it - t.columns.begin());
  int64_t index = 0;
  const auto [end, ec] = std::from_chars(label.data(), label.data() + label.size(), index);
  const int64_t n = static_cast<int64_t>(t.columns.size());
  if (ec == std::errc() && end == label.data() + label.size() && index >= -n && index < n)
    return static_cast<size_t>(index < 0 ? index + n : index);
  throw ConfigError(fmt::format("data.csv.label: no column '{}' in {}; its columns are {} (or give a 0-based index)",
                                label, t.path, fmt::join(t.columns, ", ")));
}

bool parse_int(const std::string& s, int64_t& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

/// Features [rows, F] in column order, the label column left out.
std::vector<float> features_of(const CsvTable& t, size_t label) {
  std::vector<float> out;
  out.reserve(t.rows.size() * (t.columns.size() - 1));
  for (size_t r = 0; r < t.rows.size(); ++r) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c == label) continue;
      const std::string& s = t.rows[r][c];
      const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
      float v = 0.0f;
      const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
      if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
        fail(t.who, fmt::format("{} row {}, column {}: '{}' is not {}", t.path, t.lines[r], printable(t.columns[c]),
                                printable(s),
                                ec == std::errc() && end == s.data() + s.size() ? "a finite number" : "a number"));
      out.push_back(v);
    }
  }
  return out;
}

}  // namespace

DatasetSplits csv_datasets(const std::string& train, const std::string& test, const CsvOptions& options,
                           const Normalize& normalize, const std::string& validation) {
  std::vector<CsvTable> tables;
  for (const std::string* f : {&train, &test, &validation})
    if (!f->empty()) tables.push_back(read_table(*f, options, kDataset));
  for (size_t i = 1; i < tables.size(); ++i)
    if (tables[i].columns.size() != tables[0].columns.size() ||
        (options.header && tables[i].columns != tables[0].columns))
      fail(kDataset,
           fmt::format("{} has columns {} but {} has {}; the files must have the same columns", tables[i].path,
                       fmt::join(tables[i].columns, ", "), train, fmt::join(tables[0].columns, ", ")));
  const size_t label = label_column(tables[0], options.label);
  bool numbered = true;
  std::map<std::string, int64_t> names;
  for (const CsvTable& t : tables) {
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const std::string& s = t.rows[r][label];
      if (s.empty())
        fail(kDataset, fmt::format("{} row {}, column {}: the label is empty", t.path, t.lines[r], t.columns[label]));
      int64_t v = 0;
      numbered = numbered && parse_int(s, v);
      names.emplace(s, 0);
    }
  }
  DatasetSplits splits;
  int64_t classes = 0;
  if (!numbered) {
    for (auto& [name, index] : names) {
      index = classes++;
      splits.class_names.push_back(name);
    }
  }
  std::vector<std::vector<int64_t>> labels(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    const CsvTable& t = tables[i];
    for (size_t r = 0; r < t.rows.size(); ++r) {
      int64_t v = 0;
      if (!numbered) {
        v = names.at(t.rows[r][label]);
      } else if (parse_int(t.rows[r][label], v) && v < 0) {
        fail(kDataset, fmt::format("{} row {}, column {}: class number {} is negative; use 0..K-1 or class names",
                                   t.path, t.lines[r], t.columns[label], v));
      }
      if (numbered) classes = std::max(classes, v + 1);
      labels[i].push_back(v);
    }
  }
  const int64_t features = static_cast<int64_t>(tables[0].columns.size()) - 1;
  std::vector<std::shared_ptr<const Dataset>> sets;
  for (size_t i = 0; i < tables.size(); ++i)
    sets.push_back(dataset_from_floats(features_of(tables[i], label), Shape{features, 1, 1}, labels[i], classes,
                                       normalize, "data.csv: " + tables[i].path, ""));
  splits.train = sets[0];
  splits.test = sets[1];
  if (sets.size() > 2) splits.validation = sets[2];
  return splits;
}

CsvOptions csv_options(const YAML::Node& section) {
  CsvOptions o;
  if (!section || !section.IsMap()) return o;
  if (const YAML::Node label = section["label"]) {
    if (!label.IsScalar()) throw ConfigError("data.csv.label: give a column name or a 0-based column index");
    o.label = label.Scalar();
  }
  if (section["header"]) o.header = section["header"].as<bool>();
  if (const YAML::Node d = section["delimiter"]) {
    if (d.Scalar().size() != 1)
      throw ConfigError(fmt::format("data.csv.delimiter: one character, got '{}'", d.Scalar()));
    o.delimiter = d.Scalar()[0];
  }
  return o;
}

std::vector<float> csv_features(const std::string& path, const CsvOptions& options, int64_t features) {
  CsvTable t = read_table(path, options, "", 1);
  const int64_t columns = static_cast<int64_t>(t.columns.size());
  if (columns == features + 1) return features_of(t, label_column(t, options.label));
  if (columns != features)
    fail("", fmt::format("{}: {} columns, but the model takes {} features (and the label column may be there too)",
                         path, columns, features));
  return features_of(t, t.columns.size());
}

void register_csv_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("train", true).string("test", true).string("validation").any("label").boolean("header").string(
      "delimiter");
  registry.add(
      {"csv", std::move(keys),
       [](const YAML::Node& section, const std::string&, const DataConfig& c, uint64_t) {
         if (!section || !section.IsMap() || !section["train"] || !section["test"])
           throw ConfigError("data.csv: give the files, e.g. data: {dataset: csv, csv: {train: a.csv, test: b.csv}}");
         return csv_datasets(section["train"].Scalar(), section["test"].Scalar(), csv_options(section), c.normalize,
                             section["validation"] ? section["validation"].Scalar() : std::string());
       },
       "numeric columns of a train and a test CSV file and a label column (data.csv: train, test, validation, label, "
       "header, delimiter)"});
}

}  // namespace ingot::data
