// Memory in the run records: the progress bar's "mem A/P MiB", metrics.jsonl's mem_*_mb fields,
// the stage peaks across the epochs' peak resets, the memory report's tables and the
// out-of-memory levers — each checked against tensors of known sizes (host size classes by hand).
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/config/config.h"
#include "ingot/ops/elementwise.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/train/memory_report.h"
#include "ingot/train/memory_watch.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/out_of_memory.h"
#include "ingot/train/pipeline.h"
#include "ingot/train/pipeline_schema.h"
#include "ingot/train/progress_bar.h"
#include "temp_dir.h"

namespace ingot::train {
namespace {

using Catch::Matchers::Contains;
using Json = nlohmann::json;

constexpr int64_t kMiB = 1 << 20;
// 786432 f32 = 3 MiB, a size class of its own (12 steps of 256 KiB); 262144 f32 = 1 MiB.
const Shape k3MiB{786432}, k1MiB{262144};

double mib(int64_t bytes) { return static_cast<double>(bytes) / kMiB; }

/// The allocated and peak MiB a progress line ends with ("...  mem A/P MiB"). (No std::regex:
/// GCC 12 warns inside it under the sanitizers' -O2, and warnings are errors.)
std::pair<double, double> shown(const std::string& line) {
  const std::string head = "  mem ", tail = " MiB";
  const size_t at = line.rfind(head);
  REQUIRE(at != std::string::npos);
  REQUIRE(line.size() >= tail.size());
  REQUIRE(line.compare(line.size() - tail.size(), tail.size(), tail) == 0);
  const std::string pair = line.substr(at + head.size(), line.size() - tail.size() - at - head.size());
  const size_t slash = pair.find('/');
  REQUIRE(slash != std::string::npos);
  size_t used_a = 0, used_p = 0;
  const std::string a = pair.substr(0, slash), p = pair.substr(slash + 1);
  const double allocated = std::stod(a, &used_a), peak = std::stod(p, &used_p);
  REQUIRE((used_a == a.size() && used_p == p.size()));
  return {allocated, peak};
}

TEST_CASE("progress bar: mem allocated/peak MiB at the end of each line, the peak per epoch", "[train][memory]") {
  empty_cache();
  MemoryWatch watch(Device::cpu());
  double t = 0.0;
  std::ostringstream out;
  ProgressOptions opt;
  opt.plain_every_batches = 1;
  ProgressBar bar(out, /*tty=*/false, opt, [&] { return t; });
  bar.watch_memory(&watch);
  bar.start_epoch(1, 2, 3);
  const int64_t base = memory_stats().allocated;
  { const Tensor big = Tensor::empty(k3MiB); }
  t += 1.0;
  bar.update(1, 8, 0.5, 1e-3);
  const auto [a1, p1] = shown(bar.line());
  CHECK(a1 == Approx(mib(base)).margin(0.05));
  CHECK(p1 - a1 == Approx(3.0).margin(0.1));  // the freed 3 MiB tensor is in the peak
  bar.finish_epoch();
  const std::vector<std::string> lines = [&] {
    std::vector<std::string> v;
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  }();
  REQUIRE(lines.size() == 2);
  CHECK(shown(lines[0]).second == p1);  // plain lines too
  CHECK_THAT(lines[1], Contains("lr 1.0e-03  mem "));
  CHECK(shown(lines[1]).second == p1);  // the epoch's peak
  bar.start_epoch(2, 2, 3);             // a new epoch: its peak starts at what is live
  const auto [a2, p2] = shown(bar.line());
  CHECK(p2 == a2);
}

TEST_CASE("metrics: train_step and epoch records get mem_*_mb of the watched device", "[train][memory]") {
  test::TempDir dir;
  const auto path = dir.path() / "metrics.jsonl";
  empty_cache();
  MemoryWatch watch(Device::cpu());
  const int64_t base = memory_stats().allocated, base_reserved = memory_stats().reserved;
  {
    MetricsLog log(path, false);
    log.watch_memory(&watch);
    const Tensor held = Tensor::empty(k1MiB);
    { const Tensor big = Tensor::empty(k3MiB); }
    log.log(train_step_record(1, 1, 0.5, 1e-3, 100.0, 0.1));
    log.log(Record("epoch", 1, 1).set("loss", 0.5));
    log.log(Record("eval", 1, 1).set("loss", 0.5));
  }
  std::vector<Json> lines;
  std::istringstream in(test::read_text(path));
  for (std::string l; std::getline(in, l);) lines.push_back(Json::parse(l));
  REQUIRE(lines.size() == 3);
  for (int i = 0; i < 2; ++i) {
    INFO(lines[i].dump());
    CHECK(lines[i]["mem_allocated_mb"].get<double>() == Approx(mib(base) + 1.0).margin(0.001));
    CHECK(lines[i]["mem_reserved_mb"].get<double>() == Approx(mib(base_reserved) + 4.0).margin(0.001));
    CHECK(lines[i]["mem_peak_mb"].get<double>() == Approx(mib(base) + 4.0).margin(0.001));
  }
  CHECK(lines[0]["loss"] == 0.5);  // the record's own fields come first, unchanged
  CHECK_FALSE(lines[2].contains("mem_allocated_mb"));
}

TEST_CASE("memory watch: a stage's peak spans its epochs, and caches are emptied between stages", "[train][memory]") {
  empty_cache();
  MemoryWatch watch(Device::cpu());
  const MemoryStats s0 = memory_stats();
  watch.begin_stage("train");
  { const Tensor big = Tensor::empty(k3MiB); }  // epoch 1's peak
  watch.begin_epoch();                          // resets the allocator's peak
  CHECK(memory_stats().peak_allocated == s0.allocated);
  const Tensor held = Tensor::empty(k1MiB);
  watch.end_stage();
  REQUIRE(watch.stages().size() == 2);
  CHECK(watch.stages()[0].stage == "setup");
  const DeviceMemory& train = watch.stages()[1].devices.at(0);
  CHECK(watch.stages()[1].stage == "train");
  CHECK(train.device == Device::cpu());
  CHECK(train.peak_allocated == s0.allocated + 3 * kMiB);
  CHECK(train.peak_reserved == s0.reserved + 4 * kMiB);
  CHECK(watch.run_peak(Device::cpu()) == s0.allocated + 3 * kMiB);
  watch.empty_caches();
  CHECK(memory_stats().reserved == memory_stats().allocated);
  CHECK(memory_stats().allocated == s0.allocated + kMiB);
}

TEST_CASE("memory report: stage peaks and the largest tensors at the run's peak", "[train][memory]") {
  empty_cache();
  test::TempDir dir;
  MemoryWatch watch(Device::cpu(), /*track_tensors=*/true, 3);
  const int64_t base = memory_stats().allocated;
  watch.begin_stage("train");
  {
    Tensor x = Tensor::empty(k1MiB);
    x.fill_(2.0);
    const Tensor y = x * x;                   // "mul output", 1 MiB
    const Tensor big = Tensor::empty(k3MiB);  // the run's peak: 5 MiB above the base
  }
  watch.begin_stage("evaluate");
  { const Tensor small = Tensor::empty(k1MiB); }
  std::ostringstream out;
  write_memory_report(watch, "tiny", dir.path() / "memory.md", out);
  const std::string md = test::read_text(dir.path() / "memory.md");
  INFO(md);
  CHECK(out.str() == "\n" + md + "(written to " + (dir.path() / "memory.md").string() + ")\n");
  REQUIRE(watch.stages().size() == 3);
  CHECK(watch.stages()[1].devices[0].peak_allocated == base + 5 * kMiB);
  CHECK_THAT(md, Contains("# Memory of run tiny"));
  CHECK_THAT(md, Contains("| stage | cpu peak allocated | cpu peak reserved |"));
  CHECK_THAT(md, Contains(fmt::format("| train | {} | {} |", format_memory_bytes(base + 5 * kMiB),
                                      format_memory_bytes(watch.stages()[1].devices[0].peak_reserved))));
  CHECK_THAT(md, Contains(fmt::format("| evaluate | {} |", format_memory_bytes(base + kMiB))));
  CHECK_THAT(md, Contains("## Largest tensors at the peak on cpu: "));
  CHECK_THAT(md, Contains("in the train stage"));
  CHECK_THAT(md, Contains("3 blocks allocated since the run began held 5.0 MiB"));
  CHECK_THAT(md, Contains("| 1 | 3.0 MiB | tensor (no op: parameters, batches, loaded or copied tensors) | [786432] | "
                          "float32 |\n| 2 | 1.0 MiB | tensor (no op"));
  CHECK_THAT(md, Contains("| 3 | 1.0 MiB | mul output | [262144] | float32 |"));
}

TEST_CASE("out-of-memory levers: the keys this config has not pulled yet", "[train][memory]") {
  TrainConfig t;
  const std::string all = out_of_memory_levers(t, 128);
  CHECK(all ==
        "levers this config has not used: data.batch_size: 64 (now 128; train.accumulate: 2 keeps the effective "
        "batch), train.amp: {dtype: bf16}, train.checkpointing: {segments: N}");
  t.amp.enabled = true;
  t.checkpointing_segments = 4;
  t.accumulate = 3;
  CHECK(out_of_memory_levers(t, 128) ==
        "levers this config has not used: data.batch_size: 64 (now 128; train.accumulate: 6 keeps the effective "
        "batch)");
  CHECK(out_of_memory_levers(t, 1) ==
        "no memory lever left in this config: a smaller model or a device with more memory");
}

TEST_CASE("a run out of host memory: one retry, then an error with the numbers and the levers", "[train][memory]") {
  // The first Linear's output at batch 512 is 512 x 4096 f32 = 8 MiB; the host may reserve 6 MiB
  // more than it holds when the run starts, enough for the data and the model (about 1.3 MiB).
  const config::Config cfg = config::Config::parse(R"(
name: oom_mlp
threads: 1
data:
  dataset: synthetic
  batch_size: 512
  workers: 0
  synthetic: {size: 512, test_size: 64, channels: 1, height: 8, width: 8, classes: 4}
model: {preset: mlp, input_shape: [1, 8, 8], sizes: [64, 4096, 4]}
train: {epochs: 1, optimizer: {type: sgd, lr: 0.1}, scheduler: {type: constant}}
)",
                                                   pipeline_schema(), "oom_mlp.yaml");
  test::TempDir dir;
  RunOptions options;
  options.runs_dir = dir.path();
  options.memory_report = true;
  const config::BackendSelection cpu{"reference", Device::cpu(), {"reference"}, ""};
  struct Unlimit {
    ~Unlimit() { host_allocator().set_limit(0); }
  } unlimit;
  empty_cache();
  host_allocator().set_limit(memory_stats().reserved + 6 * kMiB);
  std::ostringstream out;
  try {
    run_pipeline(cfg, cpu, options, out);
    FAIL("the run did not run out of memory");
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("cpu: out of memory: 8.0 MiB (8388608 bytes) requested, still failing after the cache "
                           "was emptied; allocated "));
    CHECK_THAT(m, Contains("would pass the host allocator's limit"));
    CHECK_THAT(m, Contains("budget "));
    CHECK_THAT(m, Contains("this run's estimate: about "));
    CHECK_THAT(m,
               Contains("levers this config has not used: data.batch_size: 256 (now 512; train.accumulate: 2 "
                        "keeps the effective batch), train.amp: {dtype: bf16}, train.checkpointing: {segments: N})"));
  }
  const std::string summary = test::read_text(dir.path() / "oom_mlp" / "summary.json");
  CHECK_THAT(summary, Contains("\"status\":\"failed\""));
  const std::string md = test::read_text(dir.path() / "oom_mlp" / "memory.md");
  INFO(out.str());
  CHECK_THAT(md, Contains("| setup |"));
  CHECK_THAT(md, Contains("| train |"));  // the stage that failed, with what was live at its peak
  CHECK_THAT(md, Contains("uniform output | [4096, 64] | float32 |"));
}

}  // namespace
}  // namespace ingot::train
