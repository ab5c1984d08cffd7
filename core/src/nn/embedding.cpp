// Embedding: index_select of weight rows over the flattened indices, reshaped back.
#include "ingot/nn/embedding.h"

#include "ingot/nn/init.h"
#include "ingot/ops/indexing.h"
#include "ingot/ops/reduce.h"

namespace ingot::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator* gen)
    : Module("Embedding"), num_(num_embeddings), dim_(embedding_dim) {
  INGOT_CHECK_SHAPE(num_ > 0 && dim_ > 0, "Embedding: num_embeddings {} and embedding_dim {} must be >= 1", num_, dim_);
  weight_ = register_parameter("weight", init::normal({num_, dim_}, 0.0, 1.0, init::generator_or_default(gen)));
}

Tensor Embedding::forward(const Tensor& indices) {
  INGOT_CHECK_AS(!is_floating(indices.dtype()) && indices.dtype() != DType::Bool, DTypeError,
                 "Embedding: indices must be an integer tensor, got {}", dtype_name(indices.dtype()));
  const Tensor flat = indices.to(DType::I64).reshape(Shape{indices.numel()}).contiguous();
  if (flat.numel() > 0 && flat.device().is_cpu()) {  // host ids: one scan, no reduction ops
    const int64_t* ids = flat.data<int64_t>();
    for (int64_t i = 0; i < flat.numel(); ++i)
      INGOT_CHECK_SHAPE(ids[i] >= 0 && ids[i] < num_, "Embedding({}, {}): index {} at position {} out of range [0, {})",
                        num_, dim_, ids[i], i, num_);
  } else if (flat.numel() > 0) {
    const double lo = min(flat).item(), hi = max(flat).item();
    INGOT_CHECK_SHAPE(lo >= 0 && hi < static_cast<double>(num_), "Embedding({}, {}): index {} out of range [0, {})",
                      num_, dim_, lo < 0 ? lo : hi, num_);
  }
  return index_select(weight_, 0, flat).reshape(output_shape(indices.shape()));
}

Shape Embedding::output_shape(const Shape& input) const {
  Shape out = input;
  out.push_back(dim_);
  return out;
}

std::string Embedding::extra_repr() const { return fmt::format("{}, {}", num_, dim_); }

}  // namespace ingot::nn
