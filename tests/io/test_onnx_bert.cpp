// ONNX export of the BERT preset against onnxruntime: both heads exported once with a dynamic T
// run on padded batches at two lengths within 1e-4 of their own forward, the padding mask built
// from the ids inside the graph; a classifier's file names its classes.
#include <catch2/catch.hpp>

#include "ingot/nn/bert.h"
#include "io_test_util.h"
#include "onnx_test_util.h"
#include "test_support.h"

using namespace ingot;
using ingot::test::forward;
using ingot::test::random_tensor;

namespace {

nn::BertConfig small_bert(const std::string& head) {
  nn::BertConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.block_size = 12;
  c.vocab_size = 24;
  c.pad_id = 20;
  c.classes = 3;
  c.head = head;
  return c;
}

// [CLS] random tokens [SEP] then padding: row i holds t - i tokens (at least 1).
Tensor padded_ids(int64_t rows, int64_t t, uint64_t seed) {
  std::vector<int64_t> ids = random_tensor(Shape{rows, t}, DType::I64, seed, 0, 19.49).to_vector<int64_t>();
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t n = std::max<int64_t>(3, t - i);
    ids[i * t] = 21;
    ids[i * t + n - 1] = 22;
    for (int64_t j = n; j < t; ++j) ids[i * t + j] = 20;
  }
  return Tensor::from_vector(ids, Shape{rows, t});
}

}  // namespace

TEST_CASE("onnx export: BERT classifier and masked LM match onnxruntime on padded batches", "[onnx]") {
  const auto python = ingot::test::onnx_python_or_skip();
  if (!python) return;
  for (const char* head : {"classify", "mlm"}) {
    INFO("head " << head);
    Generator gen(5);
    nn::Bert bert(small_bert(head), &gen);
    bert.eval();
    io::onnx::ExportOptions o;
    o.input = io::onnx::InputKind::TokenIds;
    o.input_shape = Shape{12};
    o.tokenizer = "byte";
    o.class_names = {"a", "b", "c"};
    const io::onnx::ExportResult r = io::onnx::export_onnx(bert, o);
    const ingot::test::ScratchDir dir;
    ingot::test::write_bytes(dir / "model.onnx", r.bytes);
    for (int64_t t : {int64_t{7}, int64_t{12}}) {
      INFO("T = " << t);
      const Tensor ids = padded_ids(3, t, 40 + t);
      const Tensor expected = forward(bert, ids);
      const ingot::test::OnnxRun run = ingot::test::run_onnx(*python, dir / "model.onnx", ids, dir.path());
      INGOT_REQUIRE_CLOSE(run.logits, expected, 1e-4, 0.0);
      CHECK(run.info.find(R"("inputs": [["input_ids", ["N", "T"]]])") != std::string::npos);
      if (std::string(head) == "classify") {
        CHECK(run.info.find(R"("outputs": [["logits", ["N", 3]]])") != std::string::npos);
        CHECK(run.info.find(R"(class_names": "[\"a\",\"b\",\"c\"]")") != std::string::npos);
      } else {
        CHECK(run.info.find(R"("outputs": [["logits", ["N", "T", 24]]])") != std::string::npos);
      }
      for (const auto& [name, w] : bert.state_dict()) CHECK(run.info.find('"' + name + '"') != std::string::npos);
    }
  }
}
