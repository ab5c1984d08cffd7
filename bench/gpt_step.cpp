// GPT training steps, generation and peak memory on Ingot, for bench/compare_gpt.py: one JSON
// line per run. The model is nn::Gpt (GPT-2 shape), AdamW, cross-entropy over [B, T, V] logits,
// random tokens; the weights are drawn from a seed (speed does not depend on their values).
// --bert trains a BERT sequence classifier of the same shape instead (nn::Bert, 2 classes,
// dropout 0.1 as BERT's recipe, a [PAD] id that the random tokens never hold).
//
//   gpt_step --layers 6 --heads 6 --embd 384 --block 256 --batch 8 --steps 10 [--bf16] [--checkpoint] [--bert]
//   gpt_step ... --generate 200 (batch-1 sampling through the KV cache after a 1-token prompt)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ingot/amp/autocast.h"
#include "ingot/nn/bert.h"
#include "ingot/nn/checkpoint.h"
#include "ingot/nn/generate.h"
#include "ingot/nn/gpt.h"
#include "ingot/nn/loss.h"
#include "ingot/ops/random.h"
#include "ingot/optim/adam.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/plugin_loader.h"

using namespace ingot;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int64_t arg(int argc, char** argv, const char* name, int64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::stoll(argv[i + 1]);
  return fallback;
}

/// A field of /proc/self/status in KiB (VmRSS, VmHWM).
int64_t status_kib(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  int64_t v = 0;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof(line), f) != nullptr)
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') v = std::atoll(line + n + 1);
  std::fclose(f);
  return v;
}

/// Resets VmHWM to the current RSS (as bench/torch_gpt.py does: the same measure on both sides).
void reset_hwm() {
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

bool flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  PluginLoader::instance().load_all();
  nn::GptConfig c;
  c.n_layer = arg(argc, argv, "--layers", 6);
  c.n_head = arg(argc, argv, "--heads", 6);
  c.n_embd = arg(argc, argv, "--embd", 384);
  c.block_size = arg(argc, argv, "--block", 256);
  c.vocab_size = arg(argc, argv, "--vocab", 256);
  const int64_t batch = arg(argc, argv, "--batch", 8), steps = arg(argc, argv, "--steps", 10);
  const int64_t warmup = arg(argc, argv, "--warmup", 2), gen_tokens = arg(argc, argv, "--generate", 0);
  const bool bf16 = flag(argc, argv, "--bf16"), checkpoint = flag(argc, argv, "--checkpoint");
  const bool bert = flag(argc, argv, "--bert");
  Generator gen(1);
  nn::Gpt gpt(c, &gen);
  std::unique_ptr<nn::Bert> bert_model;
  if (bert) {
    nn::BertConfig b;
    b.n_layer = c.n_layer;
    b.n_head = c.n_head;
    b.n_embd = c.n_embd;
    b.block_size = c.block_size;
    b.vocab_size = c.vocab_size + 4;
    b.pad_id = c.vocab_size;
    b.classes = 2;
    bert_model = std::make_unique<nn::Bert>(b, &gen, &gen);
  }
  nn::Module& model = bert ? static_cast<nn::Module&>(*bert_model) : gpt;
  if (gen_tokens > 0) {
    nn::SamplingOptions o;
    o.temperature = 0.0;
    o.max_tokens = std::min<int64_t>(gen_tokens, c.block_size - 1);
    nn::generate(gpt, {1}, o);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t> out = nn::generate(gpt, {1}, o);
    const double s = seconds_since(t0);
    std::printf(
        "{\"side\": \"ingot\", \"kind\": \"generate\", \"tokens\": %zu, \"seconds\": %.6f, \"tokens_per_s\": %.3f}\n",
        out.size(), s, static_cast<double>(out.size()) / s);
    return 0;
  }
  if (checkpoint) nn::apply_checkpointing(model, {0, true}, {}, "gpt_step");
  optim::AdamW opt(model.parameters());
  nn::CrossEntropyOptions ce;
  ce.classes_last = true;
  Generator data(2);
  const Tensor x = uniform(Shape{batch, c.block_size}, 0.0, static_cast<double>(c.vocab_size) - 0.51, DType::F32, &data)
                       .to(DType::I64);
  const Shape target = bert ? Shape{batch} : Shape{batch, c.block_size};
  const Tensor y =
      uniform(target, 0.0, (bert ? 2.0 : static_cast<double>(c.vocab_size)) - 0.51, DType::F32, &data).to(DType::I64);
  std::vector<double> times;
  int64_t peak = 0, peak_rss = 0;
  for (int64_t s = 0; s < warmup + steps; ++s) {
    reset_hwm();
    const int64_t rss_before = status_kib("VmRSS");
    reset_peak_memory_stats();
    const int64_t before = memory_stats().allocated;
    const auto t0 = std::chrono::steady_clock::now();
    {
      std::optional<amp::AutocastRegion> autocast;
      if (bf16) autocast.emplace(DType::BF16, model.parameters());
      const Tensor loss = nn::cross_entropy(model(x), y, ce);
      autocast.reset();
      opt.zero_grad();
      loss.backward();
    }
    opt.step();
    const double dt = seconds_since(t0);
    if (s >= warmup) {
      times.push_back(dt);
      peak = std::max(peak, memory_stats().peak_allocated - before);
      peak_rss = std::max(peak_rss, (status_kib("VmHWM") - rss_before) * 1024);
    }
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf(
      "{\"side\": \"ingot\", \"kind\": \"train\", \"model\": \"%s\", \"bf16\": %s, \"checkpoint\": %s, "
      "\"step_s\": %.6f, \"tokens_per_s\": %.1f, \"peak_bytes\": %lld, \"peak_rss_bytes\": %lld}\n",
      bert ? "bert" : "gpt", bf16 ? "true" : "false", checkpoint ? "true" : "false", median,
      static_cast<double>(batch * c.block_size) / median, static_cast<long long>(peak),
      static_cast<long long>(peak_rss));
  return 0;
}
