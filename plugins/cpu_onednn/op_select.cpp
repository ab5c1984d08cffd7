// Selection family: WHERE and the comparisons (EQ NE LT LE GT GE) on f32 as OpenMP loops — what
// the backward of ReLU and dropout runs on every training step. oneDNN has no select primitive.
// Handles dense operands of the output's shape and one-element operands (scalars broadcast).
#include <omp.h>

#include "op_families.h"

namespace ingot::onednn {
namespace {

bool is_compare(int32_t op) {
  return op == INGOT_OP_EQ || op == INGOT_OP_NE || op == INGOT_OP_LT || op == INGOT_OP_LE || op == INGOT_OP_GT ||
         op == INGOT_OP_GE;
}

bool handles(int32_t op) { return op == INGOT_OP_WHERE || is_compare(op); }

/// Dense with the output's element count, or a single element (broadcast).
bool operand_ok(const ingot_tensor_desc& t, int64_t n, int32_t dtype) {
  if (t.dtype != dtype || t.layout != INGOT_LAYOUT_STRIDED) return false;
  const int64_t m = sdk::numel(t);
  return m == 1 || (m == n && sdk::is_contiguous(t));
}

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  if (c.n_out != 1 || !sdk::is_contiguous(c.out[0])) return false;
  const int64_t n = sdk::numel(c.out[0]);
  if (c.op == INGOT_OP_WHERE) {
    if (c.n_in != 3 || c.out[0].dtype != INGOT_F32) return false;
    const int32_t cond = c.in[0].dtype;
    return (cond == INGOT_BOOL || cond == INGOT_U8) && operand_ok(c.in[0], n, cond) &&
           operand_ok(c.in[1], n, INGOT_F32) && operand_ok(c.in[2], n, INGOT_F32);
  }
  return c.n_in == 2 && c.out[0].dtype == INGOT_BOOL && operand_ok(c.in[0], n, INGOT_F32) &&
         operand_ok(c.in[1], n, INGOT_F32);
}

bool parallel(int64_t n) { return n >= Exec::kSerialGrain && omp_get_max_threads() > 1; }

/// Element i of an operand that is either dense or a broadcast scalar.
template <class T>
struct Operand {
  const T* p;
  bool scalar;
  T operator[](int64_t i) const { return scalar ? p[0] : p[i]; }
};

template <class T>
Operand<T> operand(const ingot_tensor_desc& d) {
  return {sdk::data_ptr<const T>(d), sdk::numel(d) == 1};
}

template <class Cmp>
void compare(const Operand<float> a, const Operand<float> b, bool* out, int64_t n, Cmp cmp) {
#pragma omp parallel for if (parallel(n))
  for (int64_t i = 0; i < n; ++i) out[i] = cmp(a[i], b[i]);
}

void execute(const sdk::OpCall& c, Exec&) {
  const int64_t n = sdk::numel(c.out[0]);
  if (c.op == INGOT_OP_WHERE) {
    // bool and u8 conditions are both one byte holding 0 or 1 (u8: nonzero)
    const Operand<uint8_t> cond = operand<uint8_t>(c.in[0]);
    const Operand<float> a = operand<float>(c.in[1]), b = operand<float>(c.in[2]);
    float* out = sdk::data_ptr<float>(c.out[0]);
#pragma omp parallel for if (parallel(n))
    for (int64_t i = 0; i < n; ++i) out[i] = cond[i] != 0 ? a[i] : b[i];
    return;
  }
  const Operand<float> a = operand<float>(c.in[0]), b = operand<float>(c.in[1]);
  bool* out = sdk::data_ptr<bool>(c.out[0]);
  switch (c.op) {
    case INGOT_OP_EQ: return compare(a, b, out, n, [](float x, float y) { return x == y; });
    case INGOT_OP_NE: return compare(a, b, out, n, [](float x, float y) { return x != y; });
    case INGOT_OP_LT: return compare(a, b, out, n, [](float x, float y) { return x < y; });
    case INGOT_OP_LE: return compare(a, b, out, n, [](float x, float y) { return x <= y; });
    case INGOT_OP_GT: return compare(a, b, out, n, [](float x, float y) { return x > y; });
    default: return compare(a, b, out, n, [](float x, float y) { return x >= y; });
  }
}

}  // namespace

const OpFamily& select_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
