// `ingot export RUN_OR_WEIGHTS --format onnx -o FILE [--set KEY=VALUE]...`: the trained model of a
// run as an ONNX file (io/onnx_export.h), written atomically, with the run's class names and
// input normalisation in its metadata — or, for a transformer (gpt, bert), token ids in and the
// run's tokenizer and block size in its metadata; `--format hf -o DIR`: a gpt or bert run as a
// folder Hugging Face's GPT2LMHeadModel / BertFor*.from_pretrained loads (io/hf_gpt2.h, hf_bert.h).
#include <boost/program_options.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <iostream>
#include <tuple>
#include <utility>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/io/atomic_write.h"
#include "ingot/io/hf_bert.h"
#include "ingot/io/hf_gpt2.h"
#include "ingot/io/onnx_export.h"
#include "ingot/nn/bert.h"
#include "ingot/nn/gpt.h"
#include "trained_model.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace ingot::cli {
namespace {

// The run's data.<dataset>.tokenizer: a name ("byte"), or a map with its type (and, for a trained
// tokenizer, its model file in the run folder). The text dataset's default (byte) when its section
// gives none; empty for another dataset that records none.
std::pair<std::string, std::string> tokenizer_of(const TrainedModel& m) {
  const YAML::Node section = m.data.section;
  const YAML::Node t = section.IsMap() ? section["tokenizer"] : YAML::Node();
  if (!t) return {m.data.dataset == "text" || m.data.dataset == "text_classification" ? "byte" : "", ""};
  if (t.IsScalar()) return {t.Scalar(), ""};
  if (!t.IsMap() || !t["type"]) return {};
  return {t["type"].Scalar(), t["model"] ? t["model"].Scalar() : ""};
}

}  // namespace

int cmd_export(const std::vector<std::string>& args) {
  po::options_description opts("ingot export");
  opts.add_options()("format", po::value<std::string>()->default_value("onnx"),
                     "onnx, or hf (a gpt or bert run: a folder transformers' from_pretrained loads)")(
      "output,o", po::value<std::string>(), "the file (onnx) or folder (hf) to write")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a key of the run's config (backend=cpu)")(
      "help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("run", po::value<std::string>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("run", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  constexpr const char* kUsage =
      "usage: ingot export RUN_FOLDER|WEIGHTS.safetensors [--format onnx] -o FILE.onnx | --format hf -o DIR "
      "[--set KEY=VALUE]...";
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n" << opts;
    return 0;
  }
  const std::string format = vm["format"].as<std::string>();
  INGOT_CHECK_AS(format == "onnx" || format == "hf", ConfigError,
                 "--format {}: unknown export format; formats: onnx, hf", format);
  if (!vm.count("run") || !vm.count("output")) throw ConfigError(kUsage);
  const fs::path out = vm["output"].as<std::string>();

  const TrainedModel m =
      load_trained_model(vm["run"].as<std::string>(),
                         vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{});
  const auto* gpt = dynamic_cast<const nn::Gpt*>(m.model.get());
  const auto* bert = dynamic_cast<const nn::Bert*>(m.model.get());
  if (format == "hf") {
    INGOT_CHECK_AS(gpt != nullptr || bert != nullptr, InputError,
                   "{}: --format hf writes a GPT-2 (model.preset: gpt) or a BERT (model.preset: bert); this run's "
                   "model is {}: use --format onnx",
                   m.run.string(), m.model->type_name());
    std::string loads;
    if (gpt != nullptr) {
      io::save_gpt2(*gpt, out);
      loads = "GPT2LMHeadModel";
    } else {
      io::save_bert(*bert, out, m.class_names);
      loads = bert->config().head == "classify" ? "BertForSequenceClassification" : "BertForMaskedLM";
    }
    std::cout << fmt::format(
        "export: {}/ (model.safetensors, config.json): {}.from_pretrained(\"{}\") loads it; "
        "tokenizer {}\n",
        out.string(), loads, out.string(), tokenizer_of(m).first.empty() ? "not recorded" : tokenizer_of(m).first);
    return 0;
  }
  io::onnx::ExportOptions o;
  o.input_shape = m.input_shape;
  if (bert != nullptr) {  // token ids in; a classifier's class names, the special ids to build its input
    o.input = io::onnx::InputKind::TokenIds;
    std::tie(o.tokenizer, o.tokenizer_model) = tokenizer_of(m);
    o.class_names = m.class_names;
    const int64_t pad = bert->config().pad_id;
    if (pad >= 0)  // [PAD], [CLS], [SEP], [MASK] follow the tokenizer's ids (data::special_tokens_after)
      o.extra_metadata.emplace_back("special_tokens", fmt::format(R"({{"pad": {}, "cls": {}, "sep": {}, "mask": {}}})",
                                                                  pad, pad + 1, pad + 2, pad + 3));
  } else if (gpt != nullptr) {
    o.input = io::onnx::InputKind::TokenIds;
    std::tie(o.tokenizer, o.tokenizer_model) = tokenizer_of(m);
  } else {
    o.class_names = m.class_names;
    // As `ingot predict` normalises (an empty mean or std is 0 or 1).
    o.normalize_mean = m.data.normalize.mean.empty() ? std::vector<float>{0.0f} : m.data.normalize.mean;
    o.normalize_std = m.data.normalize.std.empty() ? std::vector<float>{1.0f} : m.data.normalize.std;
  }
  fs::path run = fs::absolute(m.run).lexically_normal();
  if (run.filename().empty()) run = run.parent_path();  // "runs/x/"
  o.run_name = run.filename().string();
  o.producer_version = INGOT_VERSION;
  const io::onnx::ExportResult r = io::onnx::export_onnx(*m.model, o);
  io::atomic_write(out, r.bytes);
  const std::string head = fmt::format("export: {} (ONNX opset {}, {} nodes, {} bytes)", out.string(), io::onnx::kOpset,
                                       r.nodes, r.bytes.size());
  if (gpt != nullptr) {
    std::cout << fmt::format(
        "{}: input_ids [N, T] int64 (T <= {}, the block size), output [N, T, {}] logits, tokenizer {}{}\n", head,
        gpt->config().block_size, r.output_shape.back(), o.tokenizer.empty() ? "not recorded" : o.tokenizer,
        o.tokenizer_model.empty() ? "" : " (" + o.tokenizer_model + " in the run folder)");
    return 0;
  }
  const int64_t classes = r.output_shape.back();
  const std::string names = m.class_names.empty() ? "numbered" : fmt::format("{}", fmt::join(m.class_names, ", "));
  if (bert != nullptr) {
    std::cout << fmt::format(
        "{}: input_ids [N, T] int64 (T <= {}), output {}, tokenizer {}{}\n", head, bert->config().block_size,
        r.output_shape.size() == 2 ? fmt::format("[N, {}] logits, {} classes ({})", classes, classes, names)
                                   : fmt::format("[N, T, {}] logits", classes),
        o.tokenizer.empty() ? "not recorded" : o.tokenizer,
        o.tokenizer_model.empty() ? "" : " (" + o.tokenizer_model + " in the run folder)");
    return 0;
  }
  std::cout << fmt::format("{}: input [N, {}] f32, output [N, {}] logits, {} classes ({})\n", head,
                           fmt::join(m.input_shape, ", "), classes, classes, names);
  return 0;
}

}  // namespace ingot::cli
