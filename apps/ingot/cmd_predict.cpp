// `ingot predict RUN INPUT... [--top-k K] [-o FILE.csv] [--batch N] [--set KEY=VALUE]`: the trained
// model of a run folder (its config.resolved.yaml and model.safetensors, else its newest
// checkpoint) on arrays of samples (.npy, .npz member x, IDX files), normalised as in training,
// batched, on the config's backend; prints or writes class, probability and the top k.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "trained_model.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/data/data_config.h"
#include "ingot/data/idx.h"
#include "ingot/data/npy.h"
#include "ingot/ops/indexing.h"
#include "ingot/ops/norm.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace ingot::cli {
namespace {

/// Samples of one input file as f32 [N, *shape], normalised as the run's data were: bytes scaled
/// to [0, 1] (npy uint8, IDX), floats as stored, then data.normalize.
Tensor read_samples(const std::string& path, const Shape& shape, const data::Normalize& normalize) {
  std::vector<int64_t> dims;
  std::vector<float> values;
  if (path.ends_with(".npy") || path.ends_with(".npz")) {
    const data::NpyArray a = path.ends_with(".npy") ? data::read_npy(path) : data::read_npz(path, "x");
    dims = a.shape;
    values = data::npy_to_floats(a, path);
  } else {  // IDX (images as bytes), gzipped or not
    const data::IdxArray a = data::read_idx(path);
    dims = a.dims;
    values.resize(a.data.size());
    std::transform(a.data.begin(), a.data.end(), values.begin(), [](uint8_t b) { return b / 255.0f; });
  }
  INGOT_CHECK_AS(!dims.empty() && dims[0] > 0, InputError, "{}: no samples", path);
  const int64_t n = dims[0], per = static_cast<int64_t>(values.size()) / n;
  INGOT_CHECK_AS(per == shape.numel(), InputError,
                 "{}: samples of {} values ({}), but the model takes {} ({}): give arrays of shape [N, ...] whose "
                 "samples hold that many values",
                 path, per, Shape(std::vector<int64_t>(dims.begin() + 1, dims.end())).str(), shape.numel(),
                 shape.str());
  data::normalize_samples(values, shape, normalize, path);
  Shape full{n};
  for (int64_t d : shape) full.push_back(d);
  return Tensor::from_vector(values, full);
}

}  // namespace

int cmd_predict(const std::vector<std::string>& args) {
  po::options_description opts("ingot predict");
  opts.add_options()("top-k,k", po::value<int64_t>()->default_value(3), "how many classes to list per sample")(
      "output,o", po::value<std::string>(), "write a CSV (input, index, class, name, probability, top_k) here")(
      "batch", po::value<int64_t>()->default_value(256), "samples per forward pass")(
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
  constexpr const char* kUsage = "usage: ingot predict RUN_FOLDER INPUT... [--top-k K] [-o FILE.csv] [--batch N] "
                                 "[--set KEY=VALUE]... (INPUT: .npy, .npz with member x, or IDX files)";
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("run") || !vm.count("inputs")) throw ConfigError(kUsage);
  const fs::path run = vm["run"].as<std::string>();
  const int64_t top_k = vm["top-k"].as<int64_t>(), batch = vm["batch"].as<int64_t>();
  INGOT_CHECK_AS(top_k >= 1 && batch >= 1, ConfigError, "--top-k and --batch must be at least 1");

  const TrainedModel m = load_trained_model(run, vm.count("set") ? vm["set"].as<std::vector<std::string>>()
                                                                  : std::vector<std::string>{});
  std::cerr << fmt::format("predict: {} on {}\n", m.weights, m.sel.device.str());

  std::ofstream csv;
  if (vm.count("output")) {
    csv.open(vm["output"].as<std::string>());
    INGOT_CHECK_AS(csv.good(), InputError, "{}: cannot write the predictions", vm["output"].as<std::string>());
    csv << "input,index,class,name,probability,top_k\n";
  }
  const NoGradGuard no_grad;
  for (const std::string& input : vm["inputs"].as<std::vector<std::string>>()) {
    const Tensor x = read_samples(input, m.input_shape, m.data.normalize);
    for (int64_t from = 0; from < x.size(0); from += batch) {
      const int64_t to = std::min(x.size(0), from + batch);
      const Tensor logits = (*m.model)(x.slice(0, from, to).contiguous().to(m.sel.device)).to(Device::cpu());
      const Tensor probs = softmax(logits, 1);
      const int64_t k = std::min(top_k, probs.size(1));
      const SortResult best = topk(probs, k, 1);
      const std::vector<float> p = best.values.to_vector<float>();
      const std::vector<int64_t> c = best.indices.to_vector<int64_t>();
      for (int64_t i = 0; i < to - from; ++i) {
        std::string list;
        for (int64_t j = 0; j < k; ++j)
          list += fmt::format("{}{} {:.4f}", j ? "; " : "", m.class_name(c[i * k + j]), p[i * k + j]);
        if (csv.is_open())
          csv << fmt::format("{},{},{},{},{:.6f},\"{}\"\n", input, from + i, c[i * k], m.class_name(c[i * k]), p[i * k], list);
        else
          std::cout << fmt::format("{}[{}]  {}  {:.4f}  ({})\n", input, from + i, m.class_name(c[i * k]), p[i * k], list);
      }
    }
  }
  if (csv.is_open()) {
    csv.close();
    INGOT_CHECK_AS(!csv.fail(), InputError, "{}: writing the predictions failed", vm["output"].as<std::string>());
  }
  return 0;
}

}  // namespace ingot::cli
