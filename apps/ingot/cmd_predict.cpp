// `ingot predict RUN INPUT... [--top-k K] [-o FILE.csv] [--batch N] [--set KEY=VALUE]`: the trained
// model of a run folder (its config.resolved.yaml and model.safetensors, else its newest
// checkpoint) on arrays of samples (.npy, .npz member x, IDX files), CSV tables (or texts, for a
// text classifier), PNG / JPEG images and folders of them, prepared and normalised as in training,
// batched, on the config's backend; prints or writes class, probability and the top k.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/data/csv_dataset.h"
#include "ingot/data/data_config.h"
#include "ingot/data/idx.h"
#include "ingot/data/image_folder.h"
#include "ingot/data/npy.h"
#include "ingot/data/text_classification.h"
#include "ingot/graph/compiled_step.h"
#include "ingot/ops/indexing.h"
#include "ingot/ops/norm.h"
#include "trained_model.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace ingot::cli {
namespace {

/// One input's samples, f32 [N, *input_shape] normalised, and the file each row came from
/// (images; empty for arrays and tables, whose rows are printed as input[index]).
struct Samples {
  Tensor x;
  std::vector<std::string> files;
};

bool is_csv(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".csv";
}

/// The images as the run's image_folder dataset prepares its test split: turned upright when it
/// applied EXIF orientation (data.image_folder.exif_orientation), then its test transforms
/// (data.image_folder.transforms.test, e.g. Resize 256 + CenterCrop 224) when it has them, else
/// channels and size of the model's input by data.image_folder.resize and antialias (crop and
/// true when the run names none); values scaled to [0, 1].
std::vector<float> image_values(const std::vector<std::string>& files, const TrainedModel& m) {
  data::ResizeMode mode = data::ResizeMode::Crop;
  bool antialias = true;
  data::ExifOrientation exif = data::ExifOrientation::Ignore;
  YAML::Node transforms;  // (a missing key's node may only be tested for existence)
  if (m.data.dataset == "image_folder" && m.data.section.IsMap()) {
    if (const YAML::Node t = m.data.section["transforms"]; t && t.IsMap() && t["test"]) transforms.reset(t["test"]);
    if (m.data.section["exif_orientation"])
      exif = data::parse_exif_orientation(m.data.section["exif_orientation"].Scalar(),
                                          "data.image_folder.exif_orientation");
  }
  if (transforms && transforms.IsSequence() && !files.empty()) {
    data::ImageStreamOptions o;
    o.transforms = data::TransformPipeline::parse(transforms, m.cfg.file(), "data.image_folder.transforms.test");
    o.sample = m.input_shape;
    if (m.data.section["reduced_decode"]) o.reduced_decode = m.data.section["reduced_decode"].as<bool>();
    o.exif_orientation = exif;
    o.source = "predict";
    const data::ImageStreamDataset images(files, std::vector<int64_t>(files.size(), 0), 1, o);
    std::vector<float> values(files.size() * static_cast<size_t>(images.sample_numel()));
    for (int64_t i = 0; i < images.size(); ++i) images.read(i, values.data() + i * images.sample_numel());
    return values;
  }
  if (m.data.dataset == "image_folder" && m.data.section.IsMap()) {
    if (m.data.section["resize"])
      mode = data::parse_resize_mode(m.data.section["resize"].Scalar(), "data.image_folder.resize");
    if (m.data.section["antialias"]) antialias = m.data.section["antialias"].as<bool>();
  }
  const std::vector<uint8_t> bytes = data::load_image_samples(files, m.input_shape, mode, antialias, exif);
  std::vector<float> values(bytes.size());
  std::transform(bytes.begin(), bytes.end(), values.begin(), [](uint8_t b) { return b / 255.0f; });
  return values;
}

/// The texts of a CSV file as the run's text_classification dataset made its samples: the run's
/// text column, its tokenizer (a SentencePiece model from the run folder), [CLS] tokens [SEP]
/// padded to max_length. A label column, if any, is not read.
Samples text_samples(const std::string& path, const TrainedModel& m) {
  const data::TextClassificationOptions o = data::text_classification_options(m.data.section, m.cfg.file());
  const std::unique_ptr<data::Tokenizer> tokenizer =
      data::make_tokenizer(o.tokenizer, m.run, "data.text_classification.tokenizer");
  const data::LabelledTexts rows = data::read_labelled_csv(path, o.text_column, "");
  std::vector<std::vector<int32_t>> tokens;
  for (size_t i = 0; i < rows.texts.size(); ++i)
    tokens.push_back(
        data::classification_tokens(*tokenizer, rows.texts[i], o, fmt::format("{} line {}", path, rows.lines[i])));
  const auto n = static_cast<int64_t>(tokens.size());
  const data::TextClassificationDataset texts(std::move(tokens), std::vector<int64_t>(static_cast<size_t>(n), 0),
                                              tokenizer->vocab_size(), 2, o.max_length);
  std::vector<int64_t> ids(static_cast<size_t>(n * o.max_length));
  int64_t label = 0;
  for (int64_t i = 0; i < n; ++i) texts.read_ids(i, ids.data() + i * o.max_length, &label);
  return Samples{Tensor::from_vector(ids, Shape{n, o.max_length}), {}};
}

/// Samples of one input, normalised as the run's data were: images converted and resized, CSV
/// feature columns (the label column left out), bytes scaled to [0, 1] (npy uint8, IDX), floats
/// as stored, then data.normalize.
Samples read_samples(const std::string& path, const TrainedModel& m) {
  const Shape& shape = m.input_shape;
  std::vector<int64_t> dims;
  std::vector<float> values;
  Samples out;
  std::error_code ec;
  if (m.data.dataset == "text_classification") {
    INGOT_CHECK_AS(is_csv(path), InputError, "{}: this run classifies texts: give a .csv file with a '{}' column", path,
                   data::text_classification_options(m.data.section, m.cfg.file()).text_column);
    return text_samples(path, m);
  }
  if (fs::is_directory(path, ec) || data::is_image_path(path)) {
    out.files = fs::is_directory(path, ec) ? data::image_files(path) : std::vector<std::string>{path};
    INGOT_CHECK_AS(!out.files.empty(), InputError, "{}: no .png, .jpg or .jpeg images in the folder", path);
    values = image_values(out.files, m);
    dims = {static_cast<int64_t>(out.files.size()), shape.numel()};
  } else if (is_csv(path)) {
    const YAML::Node section = m.data.dataset == "csv" ? m.data.section : YAML::Node();
    values = data::csv_features(path, data::csv_options(section), shape.numel());
    dims = {static_cast<int64_t>(values.size()) / shape.numel(), shape.numel()};
  } else if (path.ends_with(".npy") || path.ends_with(".npz")) {
    const data::NpyArray a = path.ends_with(".npy") ? data::read_npy(path) : data::read_npz(path, "x");
    dims = a.shape;
    values = data::npy_to_floats(a, path);
  } else {  // IDX, gzipped or not: bytes scaled, other types as stored
    const data::IdxArray a = data::read_idx_any(path);
    dims = a.dims;
    values = data::idx_sample_values(a);
  }
  INGOT_CHECK_AS(!dims.empty() && dims[0] > 0, InputError, "{}: no samples", path);
  const int64_t n = dims[0], per = static_cast<int64_t>(values.size()) / n;
  INGOT_CHECK_AS(per == shape.numel(), InputError,
                 "{}: samples of {} values ({}), but the model takes {} ({}): give arrays of shape [N, ...] whose "
                 "samples hold that many values",
                 path, per, Shape(std::vector<int64_t>(dims.begin() + 1, dims.end())).str(), shape.numel(),
                 shape.str());
  data::normalize_samples(values, shape, m.data.normalize, path);
  Shape full{n};
  for (int64_t d : shape) full.push_back(d);
  out.x = Tensor::from_vector(values, full);
  return out;
}

}  // namespace

int cmd_predict(const std::vector<std::string>& args) {
  po::options_description opts("ingot predict");
  opts.add_options()("top-k,k", po::value<int64_t>()->default_value(3), "how many classes to list per sample")(
      "output,o", po::value<std::string>(), "write a CSV (input, index, class, name, probability, top_k) here")(
      "batch", po::value<int64_t>()->default_value(256), "samples per forward pass")(
      "compile", po::bool_switch(), "run the forward passes as a captured graph, replayed (docs/compile.md)")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a key of the run's config (backend=cpu)")(
      "help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("run", po::value<std::string>())("inputs", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("run", 1).add("inputs", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  constexpr const char* kUsage =
      "usage: ingot predict RUN_FOLDER INPUT... [--top-k K] [-o FILE.csv] [--batch N] [--compile] [--set KEY=VALUE]... (INPUT: "
      ".npy, .npz with member x, IDX, .csv, .png / .jpg / .jpeg images, or folders of images)";
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n"
              << "Arrays (.npy, .npz, IDX) hold samples [N, ...]; a .csv table gives its feature columns (the run's "
                 "label column is left out when present); images, and every image in a folder (recursively, "
                 "sorted), are converted and resized as the run's image_folder data, one row per file. A text "
                 "classifier's run (data.dataset: text_classification) reads a .csv of texts: its text column, "
                 "tokenized with the run's tokenizer, one row per text. A row's index "
                 "numbers it within its input (an array's or a table's rows, a folder's images); -o says where it "
                 "wrote how many rows.\n\n"
              << opts;
    return 0;
  }
  if (!vm.count("run") || !vm.count("inputs")) throw ConfigError(kUsage);
  const fs::path run = vm["run"].as<std::string>();
  const int64_t top_k = vm["top-k"].as<int64_t>(), batch = vm["batch"].as<int64_t>();
  INGOT_CHECK_AS(top_k >= 1 && batch >= 1, ConfigError, "--top-k and --batch must be at least 1");

  const std::vector<std::string> inputs = vm["inputs"].as<std::vector<std::string>>();
  for (const std::string& input : inputs) {  // (before the model is loaded: a typo fails at once)
    std::error_code ec;
    INGOT_CHECK_AS(fs::exists(input, ec), InputError,
                   "predict: {}: no such file or folder (relative paths start at the working directory, {}); give "
                   ".npy / .npz / IDX arrays, .csv tables, .png / .jpg images or folders of images",
                   input, fs::current_path(ec).string());
  }
  const TrainedModel m =
      load_trained_model(run, vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{});
  std::cerr << fmt::format("predict: {} on {}\n", m.weights, m.sel.device.str());

  std::ofstream csv;
  if (vm.count("output")) {
    csv.open(vm["output"].as<std::string>());
    INGOT_CHECK_AS(csv.good(), InputError, "{}: cannot write the predictions", vm["output"].as<std::string>());
    csv << "input,index,class,name,probability,top_k\n";
  }
  const NoGradGuard no_grad;
  std::optional<graph::CompiledStep> compiled;
  if (vm["compile"].as<bool>()) {
    graph::CompileOptions options;
    options.freeze_weights = true;  // the model does not change while it predicts
    compiled.emplace(options, std::vector<Tensor>{}, m.model->buffers());
  }
  int64_t rows = 0;
  for (const std::string& input : inputs) {
    const Samples samples = read_samples(input, m);
    const Tensor& x = samples.x;
    for (int64_t from = 0; from < x.size(0); from += batch) {
      const int64_t to = std::min(x.size(0), from + batch);
      const Tensor xb = x.slice(0, from, to).contiguous().to(m.sel.device);
      const auto forward = [&] { return std::vector<Tensor>{(*m.model)(xb)}; };
      const Tensor logits = (compiled ? compiled->run({xb}, {{"train", 0}}, forward) : forward()).front().to(Device::cpu());
      const Tensor probs = softmax(logits, 1);
      const int64_t k = std::min(top_k, probs.size(1));
      const SortResult best = topk(probs, k, 1);
      const std::vector<float> p = best.values.to_vector<float>();
      const std::vector<int64_t> c = best.indices.to_vector<int64_t>();
      for (int64_t i = 0; i < to - from; ++i) {
        std::string list;
        for (int64_t j = 0; j < k; ++j)
          list += fmt::format("{}{} {:.4f}", j ? "; " : "", m.class_name(c[i * k + j]), p[i * k + j]);
        // Rows are numbered within their input: an array's or a table's rows, a folder's images.
        const bool image = !samples.files.empty();
        const std::string& name = image ? samples.files[static_cast<size_t>(from + i)] : input;
        const int64_t index = from + i;
        ++rows;
        if (csv.is_open())
          csv << fmt::format("{},{},{},{},{:.6f},\"{}\"\n", name, index, c[i * k], m.class_name(c[i * k]), p[i * k],
                             list);
        else
          std::cout << fmt::format("{}  {}  {:.4f}  ({})\n", image ? name : fmt::format("{}[{}]", name, index),
                                   m.class_name(c[i * k]), p[i * k], list);
      }
    }
  }
  if (csv.is_open()) {
    csv.close();
    INGOT_CHECK_AS(!csv.fail(), InputError, "{}: writing the predictions failed", vm["output"].as<std::string>());
    std::error_code ec;
    std::cerr << fmt::format("predict: {} rows written to {}\n", rows,
                             fs::absolute(vm["output"].as<std::string>(), ec).lexically_normal().string());
  }
  return 0;
}

}  // namespace ingot::cli
