// Input helpers of the conformance cases: layouts (transposed, strided, offset, expanded views),
// distinct values for order-dependent ops, seeds, dtype ranges and case descriptions.
#include <algorithm>
#include <numeric>
#include <random>

#include "op_case.h"
#include "test_support.h"

namespace ingot::conformance {

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Transposed:
      return "transposed";
    case Layout::Strided:
      return "strided";
    case Layout::Offset:
      return "offset";
    case Layout::Expanded:
      return "expanded";
  }
  return "?";
}

Tensor make_input(const Shape& shape, DType dtype, uint64_t seed, Layout layout, double lo, double hi, bool integers) {
  const int n = shape.size();
  if (layout == Layout::Transposed && n < 2) layout = Layout::Strided;
  if (n == 0) layout = Layout::Contiguous;
  // integers and booleans: uniform over [lo, hi] inclusive, drawn as i64 and converted
  auto base = [&](const Shape& s) {
    if (is_floating(dtype) && !integers) return test::random_tensor(s, dtype, seed, lo, hi);
    return test::random_tensor(s, DType::I64, seed, lo - 0.49, hi + 0.49).to(dtype);
  };
  Shape b = shape;
  switch (layout) {
    case Layout::Contiguous:
      return base(shape);
    case Layout::Transposed:
      std::swap(b[n - 2], b[n - 1]);
      return base(b).transpose(n - 2, n - 1);
    case Layout::Strided:
      b[n - 1] = 2 * shape[n - 1];
      return base(b).slice(n - 1, 0, b[n - 1], 2);
    case Layout::Offset:
      b[0] = shape[0] + 1;
      return base(b).slice(0, 1, b[0]);
    case Layout::Expanded:
      b[0] = 1;
      return base(b).expand(shape);
  }
  return {};
}

Tensor small_ints(const Shape& shape, DType dtype, uint64_t seed, int64_t lo, int64_t hi) {
  // random_tensor draws [lo, hi) and rounds, so widen by half a step on each side
  return test::random_tensor(shape, DType::I64, seed, static_cast<double>(lo) - 0.49, static_cast<double>(hi) + 0.49)
      .to(dtype);
}

Tensor distinct_along(const Shape& shape, DType dtype, uint64_t seed, int axis) {
  const int n = shape.size();
  const int ax = n == 0 ? 0 : (axis < 0 ? axis + n : axis);
  const int64_t len = n == 0 ? 1 : shape[ax];
  int64_t inner = 1;
  for (int d = ax + 1; d < n; ++d) inner *= shape[d];
  const int64_t outer = len == 0 || inner == 0 ? 0 : shape.numel() / (len * inner);
  // 8-bit and bf16 types hold 256 consecutive integers exactly; shift signed ones to centre 0
  const double shift = dtype == DType::U8 ? 0.0 : static_cast<double>(std::min<int64_t>(len, 256) / 2);
  std::mt19937_64 rng(seed);
  std::vector<double> values(static_cast<size_t>(shape.numel()));
  std::vector<int64_t> perm(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      for (int64_t k = 0; k < len; ++k) {
        values[static_cast<size_t>((o * len + k) * inner + i)] = static_cast<double>(perm[k]) - shift;
      }
    }
  }
  return Tensor::from_vector(values, shape).to(dtype);
}

Tensor random_indices(const Shape& shape, int64_t bound, uint64_t seed) {
  return small_ints(shape, DType::I64, seed, 0, bound - 1);
}

std::vector<Shape> random_shapes(uint64_t seed, int count) {
  static const int64_t kDims[] = {1, 2, 3, 5, 7, 17, 1, 2, 3, 5, 7, 17, 1, 2, 3, 5, 7, 17, 4, 0};
  std::mt19937_64 rng(seed);
  std::vector<Shape> out;
  while (static_cast<int>(out.size()) < count) {
    Shape s;
    const int rank = static_cast<int>(rng() % 5);
    for (int d = 0; d < rank; ++d) s.push_back(kDims[rng() % std::size(kDims)]);
    if (s.numel() <= 4096) out.push_back(s);
  }
  return out;
}

Shape broadcastable_to(const Shape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int drop = s.size() == 0 ? 0 : static_cast<int>(rng() % (s.size() + 1));
  Shape b;
  for (int d = drop; d < s.size(); ++d) b.push_back(rng() % 3 == 0 ? 1 : s[d]);
  return b;
}

std::string tensor_note(const Tensor& t) {
  std::string s = t.shape().str() + " " + std::string(dtype_name(t.dtype()));
  if (!t.is_contiguous()) s += " strides " + t.strides().str();
  if (t.offset() != 0) s += " +" + std::to_string(t.offset());
  return s;
}

std::string OpCase::describe() const {
  std::string s = std::string(op_info(op).name) + "(";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i > 0 ? ", " : "") + tensor_note(inputs[i]);
  s += ") -> (";
  for (size_t i = 0; i < outputs.size(); ++i) {
    s += (i > 0 ? ", " : "") + outputs[i].shape.str() + " " + std::string(dtype_name(outputs[i].dtype));
  }
  s += ")";
  if (!note.empty()) s += " [" + note + "]";
  return s;
}

std::vector<DType> table_dtypes(OpKind op) {
  std::vector<DType> out;
  for (int d = 0; d < kDTypeCount; ++d) {
    if ((op_info(op).dtypes & (1u << d)) != 0) out.push_back(static_cast<DType>(d));
  }
  return out;
}

bool holds_1003_distinct(DType dtype) {
  return dtype != DType::BF16 && dtype != DType::I8 && dtype != DType::U8 && dtype != DType::Bool;
}

Range default_range(DType dtype) {
  switch (dtype) {
    case DType::U8:
      return {0.0, 10.0};
    case DType::I8:
    case DType::I32:
    case DType::I64:
      return {-10.0, 10.0};
    case DType::Bool:
      return {0.0, 1.0};
    default:
      return {-3.0, 3.0};
  }
}

OpCase new_case(OpKind op, std::string note) {
  OpCase c;
  c.op = op;
  c.note = std::move(note);
  return c;
}

namespace {
uint64_t seed_counter = 0;
}  // namespace

void reset_seeds() { seed_counter = 0; }

uint64_t next_seed(OpKind op) { return (static_cast<uint64_t>(op) << 32) + ++seed_counter; }

}  // namespace ingot::conformance
