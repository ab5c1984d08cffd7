// init_from: a strict load names what is missing and unexpected; strict: false loads what matches
// and reports the rest; prefix_map renames keys ("module." -> ""), ignore leaves keys out; a shape
// that differs is always an error naming the tensor, and so is a weight that is not finite; the
// config forms parse or are refused.
#include <catch2/catch.hpp>

#include <filesystem>
#include <limits>

#include "ingot/base/error.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/presets.h"
#include "ingot/train/init_from.h"

namespace ingot::train {
namespace {

std::shared_ptr<nn::Sequential> mlp(std::vector<int64_t> sizes, uint64_t seed) {
  Generator gen(seed);
  return nn::make_mlp({.sizes = std::move(sizes)}, &gen);
}

// Saves `model`'s state under `prefix` + name; returns the file.
std::string save(const nn::Module& model, const std::string& prefix, const std::string& file) {
  nn::StateDict renamed;
  for (const auto& [name, t] : model.state_dict()) renamed.emplace_back(prefix + name, t);
  const std::string path = (std::filesystem::temp_directory_path() / file).string();
  io::save_safetensors(path, renamed, io::Metadata{});
  return path;
}

bool same(const Tensor& a, const Tensor& b) { return a.to_vector<float>() == b.to_vector<float>(); }

TEST_CASE("init_from: strict, not strict, prefix_map and ignore", "[train][init_from]") {
  const auto source = mlp({6, 5, 3}, 1);
  const std::string plain = save(*source, "", "ingot_init_plain.safetensors");
  const std::string ddp = save(*source, "module.", "ingot_init_module.safetensors");

  auto target = mlp({6, 5, 3}, 2);
  InitFromReport r = load_init_from({.path = plain}, *target);
  CHECK(r.loaded.size() == 4);
  CHECK(same(target->state_dict()[0].second, source->state_dict()[0].second));

  // A DataParallel-style file: strict fails naming both sides, prefix_map fixes it.
  target = mlp({6, 5, 3}, 2);
  REQUIRE_THROWS_WITH(load_init_from({.path = ddp}, *target),
                      Catch::Contains("missing, kept as initialised: 1.weight") &&
                          Catch::Contains("unexpected, not used: module.1.bias") && Catch::Contains("strict: false"));
  r = load_init_from({.path = ddp, .prefix_map = {{"module.", ""}}}, *target);
  CHECK(r.loaded.size() == 4);
  CHECK(r.unexpected.empty());

  // A new head: the last layer ignored, kept as initialised, and a differing shape named.
  auto head = mlp({6, 5, 7}, 3);
  const Tensor head_before = head->state_dict()[2].second.clone();
  REQUIRE_THROWS_WITH(load_init_from({.path = plain, .strict = false}, *head),
                      Catch::Contains("'3.weight' has shape [3, 5] in the file and [7, 5] in the model"));
  r = load_init_from({.path = plain, .strict = false, .ignore = {"3.*"}}, *head);
  CHECK(r.loaded == std::vector<std::string>{"1.weight", "1.bias"});
  CHECK(r.missing == std::vector<std::string>{"3.weight", "3.bias"});
  CHECK(r.ignored.size() == 2);
  CHECK(same(head->state_dict()[0].second, source->state_dict()[0].second));
  CHECK(same(head->state_dict()[2].second, head_before));
  CHECK_THAT(r.line("f"), Catch::Contains("init_from f: 2 tensor(s) loaded; missing, kept as initialised: 3.weight, 3.bias"));
}

TEST_CASE("init_from: a NaN or infinite weight is refused, and nothing is loaded", "[train][init_from]") {
  auto source = mlp({6, 5, 3}, 1);
  source->state_dict()[2].second.detach().fill_(std::numeric_limits<double>::infinity());  // 3.weight
  const std::string file = save(*source, "", "ingot_init_inf.safetensors");
  auto target = mlp({6, 5, 3}, 2);
  const Tensor before = target->state_dict()[0].second.clone();
  REQUIRE_THROWS_WITH(load_init_from({.path = file}, *target),
                      Catch::StartsWith("init_from " + file + ": '3.weight' holds inf at element 0 of [3, 5]"));
  CHECK(same(target->state_dict()[0].second, before));
  // Left out with ignore, the same file loads.
  CHECK(load_init_from({.path = file, .strict = false, .ignore = {"3.*"}}, *target).loaded.size() == 2);
}

TEST_CASE("init_from: the config forms", "[train][init_from]") {
  CHECK(parse_init_from(YAML::Load("w.safetensors"), "c.yaml").strict);
  const InitFrom f = parse_init_from(
      YAML::Load("{path: w.safetensors, strict: false, prefix_map: {'module.': ''}, ignore: [fc.*]}"), "c.yaml");
  CHECK_FALSE(f.strict);
  CHECK(f.prefix_map == std::vector<std::pair<std::string, std::string>>{{"module.", ""}});
  CHECK(f.ignore == std::vector<std::string>{"fc.*"});
  REQUIRE_THROWS_AS(parse_init_from(YAML::Load("{strict: false}"), "c.yaml"), ConfigError);
  REQUIRE_THROWS_WITH(parse_init_from(YAML::Load("{path: w, strikt: false}"), "c.yaml"), Catch::Contains("strikt"));
  REQUIRE_THROWS_WITH(parse_init_from(YAML::Load("{path: w, ignore: fc.*}"), "c.yaml"),
                      Catch::Contains("a list of patterns"));
}

}  // namespace
}  // namespace ingot::train
