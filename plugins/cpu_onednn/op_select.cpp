// Selection family: WHERE and the comparisons (EQ NE LT LE GT GE) on f32 and bf16 as OpenMP loops
// — what the backward of dropout (and of clamp, maximum, ...) runs on every training step. oneDNN
// has no select primitive. Handles dense operands of the output's shape and one-element operands
// (scalars broadcast). WHERE copies values bit for bit; bf16 compares as the floats it holds.
#include <omp.h>

#include <type_traits>

#include "bf16.h"
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

bool value_dtype(int32_t dtype) { return dtype == INGOT_F32 || dtype == INGOT_BF16; }

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  if (c.n_out != 1 || !sdk::is_contiguous(c.out[0]) || c.out[0].layout != INGOT_LAYOUT_STRIDED) return false;
  const int64_t n = sdk::numel(c.out[0]);
  if (c.op == INGOT_OP_WHERE) {
    const int32_t t = c.out[0].dtype;
    if (c.n_in != 3 || !value_dtype(t)) return false;
    const int32_t cond = c.in[0].dtype;
    return (cond == INGOT_BOOL || cond == INGOT_U8) && operand_ok(c.in[0], n, cond) && operand_ok(c.in[1], n, t) &&
           operand_ok(c.in[2], n, t);
  }
  const int32_t t = c.in[0].dtype;
  return c.n_in == 2 && c.out[0].dtype == INGOT_BOOL && value_dtype(t) && operand_ok(c.in[0], n, t) &&
         operand_ok(c.in[1], n, t);
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

/// out[i] = cmp(a[i], b[i]) with T the storage type (float, or bf16 bits compared as floats).
template <class T, class Cmp>
void compare(const sdk::OpCall& c, Cmp cmp) {
  const int64_t n = sdk::numel(c.out[0]);
  const Operand<T> a = operand<T>(c.in[0]), b = operand<T>(c.in[1]);
  bool* out = sdk::data_ptr<bool>(c.out[0]);
  const auto value = [](const Operand<T>& o, int64_t i) {
    if constexpr (std::is_same_v<T, uint16_t>) {
      return bf16_to_float(o[i]);
    } else {
      return o[i];
    }
  };
#pragma omp parallel for if (parallel(n))
  for (int64_t i = 0; i < n; ++i) out[i] = cmp(value(a, i), value(b, i));
}

/// One loop per combination of broadcast operands, so that none tests it per element and the
/// compiler vectorizes the select (dropout's backward: a dense mask and gradient, a scalar zero).
template <class T, bool CondScalar, bool AScalar, bool BScalar>
void where_loop(const uint8_t* cond, const T* a, const T* b, T* out, int64_t n) {
#pragma omp parallel for if (parallel(n))
  for (int64_t i = 0; i < n; ++i) {
    const bool pick_a = cond[CondScalar ? 0 : i] != 0;
    const T x = a[AScalar ? 0 : i], y = b[BScalar ? 0 : i];
    out[i] = pick_a ? x : y;
  }
}

template <class T, bool CondScalar, bool AScalar>
void where_b(const uint8_t* cond, const T* a, const T* b, T* out, int64_t n, bool b_scalar) {
  if (b_scalar) return where_loop<T, CondScalar, AScalar, true>(cond, a, b, out, n);
  where_loop<T, CondScalar, AScalar, false>(cond, a, b, out, n);
}

template <class T, bool CondScalar>
void where_a(const uint8_t* cond, const T* a, const T* b, T* out, int64_t n, bool a_scalar, bool b_scalar) {
  if (a_scalar) return where_b<T, CondScalar, true>(cond, a, b, out, n, b_scalar);
  where_b<T, CondScalar, false>(cond, a, b, out, n, b_scalar);
}

template <class T>
void where(const sdk::OpCall& c) {
  const int64_t n = sdk::numel(c.out[0]);
  // bool and u8 conditions are both one byte holding 0 or 1 (u8: nonzero)
  const Operand<uint8_t> cond = operand<uint8_t>(c.in[0]);
  const Operand<T> a = operand<T>(c.in[1]), b = operand<T>(c.in[2]);
  T* out = sdk::data_ptr<T>(c.out[0]);
  if (cond.scalar) return where_a<T, true>(cond.p, a.p, b.p, out, n, a.scalar, b.scalar);
  where_a<T, false>(cond.p, a.p, b.p, out, n, a.scalar, b.scalar);
}

template <class T>
void compare_as(const sdk::OpCall& c) {
  switch (c.op) {
    case INGOT_OP_EQ:
      return compare<T>(c, [](float x, float y) { return x == y; });
    case INGOT_OP_NE:
      return compare<T>(c, [](float x, float y) { return x != y; });
    case INGOT_OP_LT:
      return compare<T>(c, [](float x, float y) { return x < y; });
    case INGOT_OP_LE:
      return compare<T>(c, [](float x, float y) { return x <= y; });
    case INGOT_OP_GT:
      return compare<T>(c, [](float x, float y) { return x > y; });
    default:
      return compare<T>(c, [](float x, float y) { return x >= y; });
  }
}

void execute(const sdk::OpCall& c, Exec&) {
  // bf16 moves as its 16-bit pattern (where) or widens to float (comparisons)
  if (c.op == INGOT_OP_WHERE) return c.out[0].dtype == INGOT_BF16 ? where<uint16_t>(c) : where<float>(c);
  return c.in[0].dtype == INGOT_BF16 ? compare_as<uint16_t>(c) : compare_as<float>(c);
}

}  // namespace

const OpFamily& select_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
