// A BERT exported in Hugging Face's format (io/hf_bert.h: `ingot export --format hf`) loads with
// transformers' BertForSequenceClassification / BertForMaskedLM.from_pretrained — every tensor
// used, none missing but the masked LM's tied decoder — and gives the same logits on padded ids.
// Needs torch and transformers: the bench venv (build/torch-venv, see bench/compare); reported
// skipped without it, as in CI.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ingot/io/hf_bert.h"
#include "ingot/nn/bert.h"
#include "test_support.h"

namespace ingot {
namespace {

TEST_CASE("bert loads into transformers' BertForSequenceClassification and BertForMaskedLM, same logits",
          "[nn][bert][hf]") {
  const std::string python = INGOT_TORCH_PYTHON;
  if (!test::transformers_or_skip(python)) return;
  for (const char* head : {"classify", "mlm"}) {
    INFO("head " << head);
    nn::BertConfig c;
    c.n_layer = 2;
    c.n_head = 2;
    c.n_embd = 16;
    c.intermediate = 24;
    c.block_size = 10;
    c.vocab_size = 30;
    c.pad_id = 26;
    c.classes = 3;
    c.head = head;
    Generator gen(4);
    nn::Bert model(c, &gen);
    model.eval();
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / fmt::format("ingot_bert_hf_{}", ::getpid());
    io::save_bert(model, dir, {"neg", "neutral", "pos"});
    const std::vector<std::vector<int64_t>> ids{{27, 3, 7, 1, 28, 26, 26}, {27, 12, 5, 9, 2, 4, 28}};
    const std::string out =
        test::capture(fmt::format("{} {} {} '{}'", python, INGOT_BERT_HF_PY, dir.string(), nlohmann::json(ids).dump()));
    std::filesystem::remove_all(dir);
    REQUIRE(!out.empty());  // (the script failed: loading refused a name or a shape)
    std::vector<int64_t> flat_ids;
    for (const auto& row : ids) flat_ids.insert(flat_ids.end(), row.begin(), row.end());
    const Tensor logits = model(Tensor::from_vector(flat_ids, Shape{2, 7}));
    const auto j = nlohmann::json::parse(out);
    const std::vector<float> theirs = j.at("logits");
    if (std::string(head) == "classify") CHECK(j.at("id2label").at("2") == "pos");
    INGOT_REQUIRE_CLOSE(logits.reshape(Shape{-1}),
                        Tensor::from_vector(theirs, Shape{static_cast<int64_t>(theirs.size())}), 1e-5, 1e-4);
  }
}

}  // namespace
}  // namespace ingot
