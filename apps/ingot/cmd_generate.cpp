// `ingot generate RUN --prompt TEXT [--max-tokens N --temperature T --top-k K --top-p P --seed S]`:
// the run's language model continues the prompt, printed as it is sampled (through the KV cache),
// tokenized as the run's data was; a closing line on stderr gives tokens/s.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/data/text_dataset.h"
#include "ingot/data/tokenizer.h"
#include "ingot/nn/generate.h"
#include "trained_model.h"

namespace po = boost::program_options;

namespace ingot::cli {

int cmd_generate(const std::vector<std::string>& args) {
  po::options_description opts("ingot generate");
  opts.add_options()("prompt", po::value<std::string>(), "the text to continue (required)")(
      "max-tokens", po::value<int64_t>()->default_value(200), "tokens to sample")(
      "temperature", po::value<double>()->default_value(1.0), "softmax temperature; 0 = greedy")(
      "top-k", po::value<int64_t>()->default_value(0), "sample among the k most likely tokens; 0 = all")(
      "top-p", po::value<double>()->default_value(1.0), "sample among the smallest set of probability p; 1 = all")(
      "seed", po::value<uint64_t>()->default_value(0), "the sample's seed")(
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
      "usage: ingot generate RUN_FOLDER|WEIGHTS.safetensors --prompt TEXT [--max-tokens N] [--temperature T] "
      "[--top-k K] [--top-p P] [--seed S] [--set KEY=VALUE]...";
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("run") || !vm.count("prompt")) throw ConfigError(kUsage);
  nn::SamplingOptions o;
  o.max_tokens = vm["max-tokens"].as<int64_t>();
  o.temperature = vm["temperature"].as<double>();
  o.top_k = vm["top-k"].as<int64_t>();
  o.top_p = vm["top-p"].as<double>();
  o.seed = vm["seed"].as<uint64_t>();
  nn::check_sampling(o);
  const std::string prompt = vm["prompt"].as<std::string>();
  INGOT_CHECK_AS(data::invalid_utf8_at(prompt) == std::string_view::npos, InputError,
                 "--prompt: the text is not UTF-8");

  const TrainedModel m =
      load_trained_model(vm["run"].as<std::string>(),
                         vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{});
  auto* gpt = dynamic_cast<nn::Gpt*>(m.model.get());
  INGOT_CHECK_AS(gpt != nullptr && m.data.dataset == "text", InputError,
                 "{}: ingot generate samples a language model (model.preset: gpt trained on data.dataset: text); this "
                 "run's model is {} on {}",
                 m.run.string(), m.model->type_name(), m.data.dataset);
  const std::unique_ptr<data::Tokenizer> tokenizer =
      data::make_tokenizer(data::text_options(m.data.section, m.cfg.file()), m.run);
  const std::vector<int32_t> ids = tokenizer->encode(prompt);

  // Bytes of a character can arrive over several tokens: print what decodes to whole characters.
  std::vector<int32_t> pending;
  std::cout << prompt << std::flush;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> out = nn::generate(*gpt, ids, o, [&](int32_t id) {
    pending.push_back(id);
    const std::string text = tokenizer->decode(pending);
    if (text.find("\xEF\xBF\xBD") == std::string::npos || pending.size() >= 4) {
      std::cout << text << std::flush;
      pending.clear();
    }
    if (interrupted()) throw InputError("interrupted");
  });
  if (!pending.empty()) std::cout << tokenizer->decode(pending);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "\n";
  std::cerr << fmt::format("generate: {} prompt + {} new tokens in {:.2f} s ({:.1f} tokens/s, KV cache) on {}\n",
                           ids.size(), out.size(), s, s > 0 ? static_cast<double>(out.size()) / s : 0.0,
                           m.model->device().str());
  return 0;
}

}  // namespace ingot::cli
