// ADD_RELU_BWD (grad_a, grad_b, y) -> y > 0 ? grad_a + grad_b : 0 on f32 and bf16, as one OpenMP
// loop. It gives the bits of the two ops it replaces here: the binary add (an IEEE sum, rounded to
// bf16 for bf16) and oneDNN's relu backward, which multiplies the gradient by 1 or 0 (so a
// negative gradient where y <= 0 gives -0, and a NaN stays NaN). All four tensors share one
// layout: the same blocked desc of ours (values in storage order, padding included), or dense.
#include <omp.h>

#include <algorithm>
#include <type_traits>

#include "bf16.h"
#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_ADD_RELU_BWD; }

bool dense(const ingot_tensor_desc& t) { return sdk::is_contiguous(t) && sdk::numel(t) > 0; }

/// Elements the loop runs over (storage order), or -1 when the call is not ours.
int64_t extent(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.n_in != 3 || c.n_out != 1) return -1;
  const ingot_tensor_desc& out = c.out[0];
  if (out.dtype != INGOT_F32 && out.dtype != INGOT_BF16) return -1;
  const dnnl::memory::desc* md = be.opaque_md(out);
  for (int i = 0; i < 4; ++i) {
    const ingot_tensor_desc& t = i < 3 ? c.in[i] : out;
    if (t.dtype != out.dtype || !is_plain_host(t) || t.ndim != out.ndim) return -1;
    for (int d = 0; d < out.ndim; ++d)
      if (t.shape[d] != out.shape[d]) return -1;
    const dnnl::memory::desc* tmd = be.opaque_md(t);
    if (md != nullptr ? (tmd == nullptr || *tmd != *md) : (tmd != nullptr || !dense(t))) return -1;
  }
  if (md != nullptr) return static_cast<int64_t>(md->get_size() / (out.dtype == INGOT_F32 ? 4 : 2));
  return sdk::numel(out);
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) { return extent(be, c) > 0; }

/// Elements [begin, end): plain loops the compiler vectorizes (restrict pointers, no branch).
void add_relu_bwd_range(const float* __restrict a, const float* __restrict b, const float* __restrict y,
                        float* __restrict out, int64_t begin, int64_t end) {
  // oneDNN's relu backward: the gradient times 1 or 0
  for (int64_t i = begin; i < end; ++i) out[i] = (a[i] + b[i]) * static_cast<float>(y[i] > 0.f);
}

/// In place: `io` holds one gradient and receives the result (a + b == b + a, bit for bit).
void add_relu_bwd_range_in_place(float* __restrict io, const float* __restrict other, const float* __restrict y,
                                 int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) io[i] = (io[i] + other[i]) * static_cast<float>(y[i] > 0.f);
}

void add_relu_bwd_range(const uint16_t* a, const uint16_t* b, const uint16_t* y, uint16_t* out, int64_t begin,
                        int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const float s = bf16_to_float(float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i])));  // ADD rounds
    out[i] = float_to_bf16(s * static_cast<float>(bf16_to_float(y[i]) > 0.f));
  }
}

/// The range split evenly over the threads (one thread below the grain size).
template <class T>
void add_relu_bwd(const T* a, const T* b, const T* y, T* out, int64_t n) {
  const bool parallel = n >= Exec::kSerialGrain && omp_get_max_threads() > 1;
#pragma omp parallel if (parallel)
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t per = (n + threads - 1) / threads / 16 * 16 + 16;  // 64-byte aligned chunks
    const int64_t begin = std::min(n, t * per), end = std::min(n, begin + per);
    bool done = false;
    if constexpr (std::is_same_v<T, float>) {  // restrict pointers must not alias
      if (out == a || out == b) {
        add_relu_bwd_range_in_place(out, out == a ? b : a, y, begin, end);
        done = true;
      }
    }
    if (!done) add_relu_bwd_range(a, b, y, out, begin, end);
  }
}

void execute(const sdk::OpCall& c, Exec& ex) {
  const int64_t n = extent(ex.backend(), c);
  if (n <= 0) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn add_relu_bwd: unsupported call");
  if (c.out[0].dtype == INGOT_F32)
    add_relu_bwd(sdk::data_ptr<const float>(c.in[0]), sdk::data_ptr<const float>(c.in[1]),
                 sdk::data_ptr<const float>(c.in[2]), sdk::data_ptr<float>(c.out[0]), n);
  else
    add_relu_bwd(sdk::data_ptr<const uint16_t>(c.in[0]), sdk::data_ptr<const uint16_t>(c.in[1]),
                 sdk::data_ptr<const uint16_t>(c.in[2]), sdk::data_ptr<uint16_t>(c.out[0]), n);
}

// Blocked inputs (all alike): the gradient is blocked alike.
bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (index != 0 || c.n_in != 3) return false;
  const dnnl::memory::desc* md = be.opaque_md(c.in[0]);
  for (int i = 1; i < 3; ++i) {
    const dnnl::memory::desc* other = be.opaque_md(c.in[i]);
    if (md == nullptr || other == nullptr || *other != *md) return false;
  }
  return outputs[0].dtype == c.in[0].dtype && set_opaque_output(be, outputs, 0, *md);
}

// Either gradient may be overwritten by the result: each element is read before it is written.
bool in_place(OnednnBackend& be, const sdk::OpCall& c, int out, int in) {
  (void)be, (void)c;
  return out == 0 && (in == 0 || in == 1);
}

}  // namespace

const OpFamily& add_relu_bwd_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout, nullptr, &in_place};
  return f;
}

}  // namespace ingot::onednn
