// CROSS_ENTROPY and its backward on f32 and bf16 logits as OpenMP loops over rows (oneDNN has no
// such primitive): one pass for the row's maximum, one for the sum of exponentials (accumulated
// in double), the loss from the target and the row sum; backward recomputes each row's
// log-sum-exp, as the reference does, because an f32 lse loses softmax's precision at large logits.
#include <omp.h>

#include <cmath>
#include <limits>
#include <string>

#include "bf16.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_CROSS_ENTROPY || op == INGOT_OP_CROSS_ENTROPY_BWD; }

bool dense(const ingot_tensor_desc& t, int32_t dtype) {
  return t.dtype == dtype && t.layout == INGOT_LAYOUT_STRIDED && sdk::is_contiguous(t);
}

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  const bool bwd = c.op == INGOT_OP_CROSS_ENTROPY_BWD;
  if (c.n_in != (bwd ? 4 : 2) || c.n_out != (bwd ? 1 : 2)) return false;
  const ingot_tensor_desc& logits = c.in[bwd ? 1 : 0];
  const ingot_tensor_desc& target = c.in[bwd ? 2 : 1];
  const int32_t dt = logits.dtype;
  if ((dt != INGOT_F32 && dt != INGOT_BF16) || logits.ndim != 2 || !dense(logits, dt) || !dense(target, INGOT_I64))
    return false;
  const int64_t n = logits.shape[0];
  if (target.ndim != 1 || target.shape[0] != n) return false;
  if (bwd)
    return dense(c.in[0], dt) && sdk::numel(c.in[0]) == n && dense(c.out[0], dt) &&
           sdk::numel(c.out[0]) == n * logits.shape[1];
  return dense(c.out[0], dt) && sdk::numel(c.out[0]) == n && dense(c.out[1], INGOT_F32) && sdk::numel(c.out[1]) == n;
}

/// The log-sum-exp of a row (its maximum when that is infinite, as the reference gives).
template <class T>
double row_lse(const T* z, int64_t classes) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < classes; ++j) m = std::max(m, load_f32(z, j));
  if (std::isinf(m)) return m;
  double sum = 0.0;
  for (int64_t j = 0; j < classes; ++j) sum += std::exp(load_f32(z, j) - m);
  return static_cast<double>(m) + std::log(sum);
}

void check_target(int64_t t, int64_t row, int64_t classes, int64_t ignore) {
  if (t != ignore && (t < 0 || t >= classes))
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cross_entropy: target " + std::to_string(t) + " of row " +
                                                       std::to_string(row) + " is outside [0, " +
                                                       std::to_string(classes) + ")");
}

template <class T>
void forward(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_cross_entropy>(c.attrs);
  const int64_t n = c.in[0].shape[0], classes = c.in[0].shape[1];
  const T* logits = sdk::data_ptr<const T>(c.in[0]);
  const int64_t* target = sdk::data_ptr<const int64_t>(c.in[1]);
  T* loss = sdk::data_ptr<T>(c.out[0]);
  float* lse_out = sdk::data_ptr<float>(c.out[1]);
  const double ls = a.label_smoothing;
  for (int64_t i = 0; i < n; ++i) check_target(target[i], i, classes, a.ignore_index);
#pragma omp parallel for schedule(static) if (n * classes >= Exec::kSerialGrain && omp_get_max_threads() > 1)
  for (int64_t i = 0; i < n; ++i) {
    const T* z = logits + i * classes;
    const double lse = row_lse(z, classes);
    lse_out[i] = static_cast<float>(lse);
    const int64_t t = target[i];
    double l = 0.0;
    if (t != a.ignore_index) {
      l = (1.0 - ls) * (lse - load_f32(z, t));
      if (ls > 0.0) {
        double all = 0.0;
        for (int64_t j = 0; j < classes; ++j) all += lse - load_f32(z, j);
        l += ls / static_cast<double>(classes) * all;
      }
    }
    store_f32(loss, i, static_cast<float>(l));
  }
}

template <class T>
void backward(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_cross_entropy>(c.attrs);
  const int64_t n = c.in[1].shape[0], classes = c.in[1].shape[1];
  const T* grad_loss = sdk::data_ptr<const T>(c.in[0]);
  const T* logits = sdk::data_ptr<const T>(c.in[1]);
  const int64_t* target = sdk::data_ptr<const int64_t>(c.in[2]);
  T* grad = sdk::data_ptr<T>(c.out[0]);
  const double ls = a.label_smoothing, off = ls / static_cast<double>(classes);
  for (int64_t i = 0; i < n; ++i) check_target(target[i], i, classes, a.ignore_index);
#pragma omp parallel for schedule(static) if (n * classes >= Exec::kSerialGrain && omp_get_max_threads() > 1)
  for (int64_t i = 0; i < n; ++i) {
    const T* z = logits + i * classes;
    T* g = grad + i * classes;
    const int64_t t = target[i];
    if (t == a.ignore_index) {
      for (int64_t j = 0; j < classes; ++j) store_f32(g, j, 0.0f);
      continue;
    }
    const double lse = row_lse(z, classes);
    const float gl = load_f32(grad_loss, i);
    for (int64_t j = 0; j < classes; ++j) {
      const double p = std::exp(static_cast<double>(load_f32(z, j)) - lse);
      store_f32(g, j, static_cast<float>(gl * (p - off - (j == t ? 1.0 - ls : 0.0))));
    }
  }
}

void execute(const sdk::OpCall& c, Exec&) {
  const bool bf16 = c.in[c.op == INGOT_OP_CROSS_ENTROPY_BWD ? 1 : 0].dtype == INGOT_BF16;
  if (c.op == INGOT_OP_CROSS_ENTROPY) return bf16 ? forward<uint16_t>(c) : forward<float>(c);
  return bf16 ? backward<uint16_t>(c) : backward<float>(c);
}

}  // namespace

const OpFamily& cross_entropy_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
