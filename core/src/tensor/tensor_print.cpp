// Readable printing of tensors in PyTorch's style, summarising large ones.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ingot/tensor/tensor.h"
#include "tensor/element.h"

namespace ingot {
namespace {

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;

std::string format_value(DType t, double v) {
  if (t == DType::Bool) return v != 0.0 ? "True" : "False";
  if (!is_floating(t)) return fmt::format("{}", static_cast<int64_t>(v));
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a != 0.0 && (a >= 1e8 || a < 1e-4)) return fmt::format("{:.4e}", v);
  return fmt::format("{:.4f}", v);
}

void print_dim(const Tensor& t, int d, int64_t offset, bool summarize, int indent, std::string& out) {
  const char* base = static_cast<const char*>(t.storage()->data());
  const int64_t esize = dtype_size(t.dtype());
  if (d == t.dim()) {
    out += format_value(t.dtype(), load_element(t.dtype(), base + offset * esize));
    return;
  }
  const int64_t n = t.shape()[d];
  out += '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      out += d + 1 == t.dim() ? "..., " : fmt::format("...,\n{:{}}", "", indent + 1);
      i = n - kEdgeItems;
    }
    print_dim(t, d + 1, offset + i * t.strides()[d], summarize, indent + 1, out);
    if (i + 1 < n) out += d + 1 == t.dim() ? ", " : fmt::format(",\n{:{}}", "", indent + 1);
  }
  out += ']';
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  const Tensor t = to(Device::cpu()).strided();
  std::string out = "tensor(";
  print_dim(t, 0, t.offset(), t.numel() > kSummarizeAbove, 7, out);
  if (t.numel() == 0) out += fmt::format(", size={}", shape().str());
  if (dtype() != DType::F32 && dtype() != DType::I64 && dtype() != DType::Bool)
    out += fmt::format(", dtype={}", dtype_name(dtype()));
  if (!device().is_cpu()) out += fmt::format(", device='{}'", device().str());
  return out + ")";
}

}  // namespace ingot
