// The run's logs besides metrics.jsonl's lines: the "time" of every record, TensorBoard event
// files (CRC32C, TFRecord framing, Event protos read back by a small reader here), metrics.csv,
// console.log's tee and the `logging:` section.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/train/console_log.h"
#include "ingot/train/csv_log.h"
#include "ingot/train/logging_config.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/tensorboard_event.h"
#include "ingot/train/tensorboard_writer.h"
#include "temp_dir.h"

using ingot::train::CsvLog;
using ingot::train::MetricsLog;
using ingot::train::Record;
using ingot::train::train_step_record;
namespace tb = ingot::train::tensorboard;

namespace {

// ---- a minimal reader of TFRecords and Event protos, independent of the writer ----

uint64_t read_le(const std::string& s, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s.at(at + i))) << (8 * i);
  return v;
}

uint64_t read_varint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto b = static_cast<unsigned char>(s.at(at++));
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
}

/// The records of an event file; throws when a length or a CRC does not match.
std::vector<std::string> read_records(const std::string& file) {
  std::vector<std::string> out;
  for (size_t at = 0; at < file.size();) {
    const uint64_t n = read_le(file, at, 8);
    if (read_le(file, at + 8, 4) != tb::masked_crc32c(file.substr(at, 8))) throw std::runtime_error("length crc");
    std::string data = file.substr(at + 12, n);
    if (data.size() != n || read_le(file, at + 12 + n, 4) != tb::masked_crc32c(data))
      throw std::runtime_error("data crc");
    out.push_back(std::move(data));
    at += 16 + n;
  }
  return out;
}

/// The fields of one message: field number -> raw value (varint / fixed as an integer, bytes).
struct Fields {
  std::map<uint32_t, uint64_t> numbers;
  std::map<uint32_t, std::string> bytes;
};

Fields parse_message(const std::string& m) {
  Fields f;
  for (size_t at = 0; at < m.size();) {
    const uint64_t key = read_varint(m, at);
    const auto field = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0:
        f.numbers[field] = read_varint(m, at);
        break;
      case 1:
        f.numbers[field] = read_le(m, at, 8);
        at += 8;
        break;
      case 5:
        f.numbers[field] = read_le(m, at, 4);
        at += 4;
        break;
      case 2: {
        const uint64_t n = read_varint(m, at);
        f.bytes[field] = m.substr(at, n);
        at += n;
        break;
      }
      default:
        throw std::runtime_error("unexpected wire type");
    }
  }
  return f;
}

struct Scalar {
  double wall_time;
  int64_t step;
  std::string tag;
  float value;
};

Scalar parse_scalar(const std::string& event) {
  const Fields e = parse_message(event);
  const Fields summary = parse_message(e.bytes.at(5));
  const Fields value = parse_message(summary.bytes.at(1));
  Scalar s{};
  const uint64_t wall = e.numbers.at(1);
  std::memcpy(&s.wall_time, &wall, sizeof wall);
  s.step = static_cast<int64_t>(e.numbers.at(2));
  s.tag = value.bytes.at(1);
  const auto bits = static_cast<uint32_t>(value.numbers.at(2));
  std::memcpy(&s.value, &bits, sizeof bits);
  return s;
}

std::filesystem::path only_file(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  return files.front();
}

}  // namespace

TEST_CASE("tensorboard: CRC32C check value and its mask", "[train][run_logs]") {
  CHECK(tb::crc32c("123456789") == 0xE3069283u);
  CHECK(tb::crc32c("") == 0u);
  CHECK(tb::masked_crc32c("123456789") == 0xC78AB0E5u);
  CHECK(tb::masked_crc32c("") == 0xA282EAD8u);
}

TEST_CASE("tensorboard: a record's framing and a corrupted byte caught by the reader", "[train][run_logs]") {
  const std::string rec = tb::tf_record("abc");
  REQUIRE(rec.size() == 3 + 16);
  CHECK(read_le(rec, 0, 8) == 3);
  CHECK(read_records(rec) == std::vector<std::string>{"abc"});
  std::string bad = rec;
  bad[13] ^= 1;
  CHECK_THROWS(read_records(bad));
}

TEST_CASE("tensorboard: scalar events keep large steps, exact times and float values", "[train][run_logs]") {
  const Scalar s = parse_scalar(tb::scalar_event(1712345678.125, int64_t{1} << 40, "train/loss", 0.25f));
  CHECK(s.wall_time == 1712345678.125);
  CHECK(s.step == int64_t{1} << 40);
  CHECK(s.tag == "train/loss");
  CHECK(s.value == 0.25f);
  const Fields v = parse_message(tb::file_version_event(3.5));
  CHECK(v.bytes.at(3) == "brain.Event:2");
  CHECK(v.numbers.count(2) == 0);
}

TEST_CASE("tensorboard: the writer turns metrics records into the run's scalars", "[train][run_logs]") {
  ingot::test::TempDir dir;
  {
    MetricsLog log(dir.path() / "metrics.jsonl", false);
    log.add_sink(std::make_unique<ingot::train::TensorBoardWriter>(dir.path() / "tensorboard"));
    log.log(train_step_record(1, 300, 0.5, 0.01, 1000.0, 0.1).set("time", 100.25));
    log.log(Record("eval", 1, 300).set("loss", 0.75).set("accuracy", 0.875).set("time", 101.5));
    log.log(Record("epoch", 1, 300).set("loss", 0.625));
    log.log(Record("summary", 1, 300).set("train_loss", 0.5));  // no scalar
  }
  const std::string file = ingot::test::read_text(only_file(dir.path() / "tensorboard"));
  CHECK_THAT(only_file(dir.path() / "tensorboard").filename().string(), Catch::StartsWith("events.out.tfevents."));
  const std::vector<std::string> records = read_records(file);
  REQUIRE(records.size() == 1 + 3 + 2 + 1);
  CHECK(parse_message(records[0]).bytes.at(3) == "brain.Event:2");
  std::vector<std::pair<std::string, float>> got;
  for (size_t i = 1; i < records.size(); ++i) {
    const Scalar s = parse_scalar(records[i]);
    CHECK(s.step == 300);
    got.emplace_back(s.tag, s.value);
  }
  CHECK(got == std::vector<std::pair<std::string, float>>{{"train/loss", 0.5f},
                                                          {"train/lr", 0.01f},
                                                          {"train/images_per_s", 1000.0f},
                                                          {"eval/loss", 0.75f},
                                                          {"eval/accuracy", 0.875f},
                                                          {"epoch/loss", 0.625f}});
  CHECK(parse_scalar(records[1]).wall_time == 100.25);
  CHECK(parse_scalar(records[4]).wall_time == 101.5);
  CHECK(parse_scalar(records[6]).wall_time > 1.5e9);  // the log's own time: now
}

TEST_CASE("metrics log: every line gets a time after its own fields, a given one is kept", "[train][run_logs]") {
  ingot::test::TempDir dir;
  const auto path = dir.path() / "metrics.jsonl";
  const double before = ingot::train::unix_time_now();
  {
    MetricsLog log(path, false);
    log.log(train_step_record(1, 1, 0.5, 1e-3, 10.0, 0.1));
    log.log(Record("eval", 1, 1).set("time", 42.5));
  }
  std::istringstream in(ingot::test::read_text(path));
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  const auto j = nlohmann::ordered_json::parse(first);
  CHECK(j.begin().key() == "event");
  CHECK((--j.end()).key() == "time");
  CHECK(j["time"].get<double>() >= before);
  CHECK(j["time"].get<double>() < before + 3600);
  CHECK(nlohmann::json::parse(second)["time"] == 42.5);
}

TEST_CASE("metrics.csv: the header, then one row per train_step, epoch and eval", "[train][run_logs]") {
  ingot::test::TempDir dir;
  const auto csv = dir.path() / "metrics.csv";
  {
    MetricsLog log(dir.path() / "metrics.jsonl", false);
    log.add_sink(std::make_unique<CsvLog>(csv, std::nullopt));
    log.log(train_step_record(1, 1, 0.5, 0.001, 250.0, 0.1).set("time", 10.5));
    log.log(Record("epoch", 1, 1).set("loss", 0.25).set("time", 11.0));
    log.log(Record("eval", 1, 1).set("loss", 0.75).set("accuracy", 0.875).set("time", 12.0).set("split", "validation"));
    log.log(Record("summary", 1, 1).set("train_loss", 0.5));
  }
  CHECK(ingot::test::read_text(csv) ==
        "event,epoch,step,time,loss,lr,accuracy,images_per_s,split\n"
        "train_step,1,1,10.5,0.5,0.001,,250,\n"
        "epoch,1,1,11,0.25,,,,\n"
        "eval,1,1,12,0.75,,0.875,,validation\n");
}

TEST_CASE("metrics.csv: a resume keeps the rows up to its step, without a second header", "[train][run_logs]") {
  ingot::test::TempDir dir;
  const auto csv = dir.path() / "metrics.csv";
  {
    CsvLog log(csv, std::nullopt);
    for (int step = 1; step <= 4; ++step) log.write(train_step_record(1, step, 0.5, 0.1, 1.0, 0.1).set("time", 1.0));
  }
  ingot::test::write_text(csv, ingot::test::read_text(csv) + "train_step,1,5,1");  // torn by a kill
  {
    CsvLog log(csv, int64_t{2});
    log.write(train_step_record(1, 3, 0.25, 0.1, 1.0, 0.1).set("time", 2.0));
  }
  CHECK(ingot::test::read_text(csv) ==
        "event,epoch,step,time,loss,lr,accuracy,images_per_s,split\n"
        "train_step,1,1,1,0.5,0.1,,1,\n"
        "train_step,1,2,1,0.5,0.1,,1,\n"
        "train_step,1,3,2,0.25,0.1,,1,\n");
  // Turned on at a resume: the file is started with its header.
  std::filesystem::remove(csv);
  { CsvLog log(csv, int64_t{2}); }
  CHECK(ingot::test::read_text(csv) == "event,epoch,step,time,loss,lr,accuracy,images_per_s,split\n");
}

TEST_CASE("console log: early output first, then everything printed, the stream restored", "[train][run_logs]") {
  ingot::test::TempDir dir;
  std::ostringstream out;
  std::streambuf* const original = out.rdbuf();
  {
    ingot::train::ConsoleTee tee(out);
    out << "run: tiny\n" << 42 << '\n';
    tee.attach(dir.path() / "console.log", /*append=*/false);
    out << "evaluate: done\n";
    out.flush();
  }
  CHECK(out.rdbuf() == original);
  CHECK(out.str() == "run: tiny\n42\nevaluate: done\n");
  CHECK(ingot::test::read_text(dir.path() / "console.log") == "run: tiny\n42\nevaluate: done\n");
  {  // a resume appends; a discarded tee writes nothing
    ingot::train::ConsoleTee tee(out);
    out << "resuming\n";
    tee.attach(dir.path() / "console.log", /*append=*/true);
  }
  CHECK(ingot::test::read_text(dir.path() / "console.log") == "run: tiny\n42\nevaluate: done\nresuming\n");
  {
    ingot::train::ConsoleTee tee(out);
    out << "other rank\n";
    tee.discard();
  }
  CHECK(out.str() == "run: tiny\n42\nevaluate: done\nresuming\nother rank\n");
}

TEST_CASE("logging config: defaults off, both keys read, unknown keys refused", "[train][run_logs]") {
  const auto none = ingot::train::parse_logging_config(YAML::Node(), "x.yaml");
  CHECK_FALSE(none.tensorboard);
  CHECK_FALSE(none.csv);
  const auto both = ingot::train::parse_logging_config(YAML::Load("{tensorboard: true, csv: true}"), "x.yaml");
  CHECK(both.tensorboard);
  CHECK(both.csv);
  CHECK_THROWS_AS(ingot::train::parse_logging_config(YAML::Load("{tensorbord: true}"), "x.yaml"), ingot::ConfigError);
}
