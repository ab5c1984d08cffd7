// INDEX_SELECT (rows copied, any dtype) and SCATTER_ADD (f32) on dense tensors as OpenMP loops: an
// embedding's forward and backward (oneDNN has no gather or scatter primitive; the reference's
// single thread was 4% of a GPT step). SCATTER_ADD adds each output element's terms in the
// reference's order (increasing position along the axis), so its sums have the reference's bits;
// its index may be broadcast (stride 0) across the dims after the axis, as an embedding's gradient
// spreads its token ids, which is then read once per row.
#include <omp.h>

#include <cstring>

#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_INDEX_SELECT || op == INGOT_OP_SCATTER_ADD; }

bool dense(const ingot_tensor_desc& t) {
  return t.device_kind == INGOT_DEVICE_CPU && t.layout == INGOT_LAYOUT_STRIDED && sdk::is_contiguous(t);
}

bool is_index(const ingot_tensor_desc& t) {
  return t.device_kind == INGOT_DEVICE_CPU && t.layout == INGOT_LAYOUT_STRIDED &&
         (t.dtype == INGOT_I64 || t.dtype == INGOT_I32);
}

int axis_of(const sdk::OpCall& c, int ndim) {
  const auto* a = static_cast<const ingot_attr_axis*>(c.attrs);
  if (a == nullptr || a->struct_size < sizeof(ingot_attr_axis)) return -1;
  const int axis = a->axis < 0 ? a->axis + ndim : a->axis;
  return axis >= 0 && axis < ndim ? axis : -1;
}

// A tensor of rank >= 1 seen as [outer, lane, inner] around `axis`.
struct Dims {
  int64_t outer = 1, lane = 1, inner = 1;
};

Dims dims_of(const ingot_tensor_desc& t, int axis) {
  Dims d;
  for (int k = 0; k < t.ndim; ++k) {
    if (k < axis) d.outer *= t.shape[k];
    if (k > axis) d.inner *= t.shape[k];
  }
  d.lane = t.shape[axis];
  return d;
}

// The single stride that walks dims [begin, end) of `t` as one (size-1 dims ignored); false when
// they do not collapse.
bool collapse(const ingot_tensor_desc& t, int begin, int end, int64_t& stride) {
  stride = 0;
  int64_t expect = -1;  // the stride the next dim (going outwards) must have
  for (int k = end - 1; k >= begin; --k) {
    if (t.shape[k] == 1) continue;
    if (expect < 0) {
      stride = t.strides[k];
    } else if (t.strides[k] != expect) {
      return false;
    }
    expect = t.strides[k] * t.shape[k];
  }
  return true;
}

// The index's strides over [outer, lane, inner].
struct IndexWalk {
  int64_t outer = 0, lane = 0, inner = 0;
};

bool index_walk(const ingot_tensor_desc& index, int axis, IndexWalk& w) {
  w.lane = index.strides[axis];
  return collapse(index, 0, axis, w.outer) && collapse(index, axis + 1, index.ndim, w.inner);
}

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  if (c.n_out != 1 || !dense(c.out[0])) return false;
  const ingot_tensor_desc& out = c.out[0];
  if (c.op == INGOT_OP_INDEX_SELECT) {
    if (c.n_in != 2 || !dense(c.in[0]) || !is_index(c.in[1]) || c.in[1].ndim > 1) return false;
    const ingot_tensor_desc& self = c.in[0];
    if (self.dtype != out.dtype || self.ndim < 1 || out.ndim != self.ndim) return false;
    const int axis = axis_of(c, self.ndim);
    if (axis < 0) return false;
    for (int d = 0; d < out.ndim; ++d)
      if (out.shape[d] != (d == axis ? sdk::numel(c.in[1]) : self.shape[d])) return false;
    return true;
  }
  // SCATTER_ADD: src of the index's shape, equal to self off the axis.
  if (c.n_in != 3 || !dense(c.in[0]) || !is_index(c.in[1]) || !dense(c.in[2])) return false;
  const ingot_tensor_desc &self = c.in[0], &index = c.in[1], &src = c.in[2];
  if (out.dtype != INGOT_F32 || self.dtype != INGOT_F32 || src.dtype != INGOT_F32) return false;
  if (self.ndim < 1 || index.ndim != self.ndim || src.ndim != self.ndim || out.ndim != self.ndim) return false;
  const int axis = axis_of(c, self.ndim);
  if (axis < 0) return false;
  for (int d = 0; d < self.ndim; ++d) {
    if (out.shape[d] != self.shape[d] || index.shape[d] != src.shape[d]) return false;
    if (d != axis && src.shape[d] != self.shape[d]) return false;
  }
  IndexWalk w;
  return index_walk(index, axis, w);
}

int64_t load_index(const ingot_tensor_desc& index, int64_t offset) {
  return index.dtype == INGOT_I64 ? sdk::data_ptr<const int64_t>(index)[offset]
                                  : static_cast<int64_t>(sdk::data_ptr<const int32_t>(index)[offset]);
}

[[noreturn]] void out_of_range(int32_t op, int64_t i, int64_t bound) {
  throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT,
                     std::string(op == INGOT_OP_INDEX_SELECT ? "index_select" : "scatter_add") + ": index " +
                         std::to_string(i) + " is out of range for a dim of size " + std::to_string(bound));
}

bool parallel(int64_t work) { return work >= Exec::kSerialGrain && omp_get_max_threads() > 1; }

void index_select(const sdk::OpCall& c) {
  const ingot_tensor_desc &self = c.in[0], &index = c.in[1], &out = c.out[0];
  const int axis = axis_of(c, self.ndim);
  const Dims d = dims_of(self, axis);
  const int64_t n = sdk::numel(index), stride = index.ndim == 1 ? index.strides[0] : 0;
  for (int64_t j = 0; j < n; ++j) {  // the reference's first bad index, before anything is written
    const int64_t i = load_index(index, j * stride);
    if (i < 0 || i >= d.lane) out_of_range(c.op, i, d.lane);
  }
  const auto row = static_cast<size_t>(d.inner * sdk::dtype_size(self.dtype));
  const char* from = sdk::data_ptr<const char>(self);
  char* to = sdk::data_ptr<char>(out);
  const int64_t rows = d.outer * n;
#pragma omp parallel for if (parallel(rows * d.inner))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r / n, j = r % n;
    std::memcpy(to + r * row, from + (o * d.lane + load_index(index, j * stride)) * row, row);
  }
}

void scatter_add(const sdk::OpCall& c) {
  const ingot_tensor_desc &self = c.in[0], &index = c.in[1], &src = c.in[2], &out = c.out[0];
  const int axis = axis_of(c, self.ndim);
  const Dims d = dims_of(self, axis);
  const int64_t n = src.shape[axis];
  IndexWalk w;
  index_walk(index, axis, w);
  // The reference's first bad index in row-major order, before anything is written.
  const int64_t inner_checked = w.inner == 0 ? 1 : d.inner;
  for (int64_t o = 0; o < d.outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner_checked; ++k) {
        const int64_t t = load_index(index, o * w.outer + i * w.lane + k * w.inner);
        if (t < 0 || t >= d.lane) out_of_range(c.op, t, d.lane);
      }
  float* y = sdk::data_ptr<float>(out);
  const float* s = sdk::data_ptr<const float>(src);
  if (y != sdk::data_ptr<const float>(self))
    std::memcpy(y, sdk::data_ptr<const float>(self), static_cast<size_t>(sdk::numel(out)) * sizeof(float));
#pragma omp parallel if (parallel(d.outer * n * d.inner))
  {
    // Threads split the inner positions: each output element gets its terms in increasing i.
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t begin = d.inner * t / threads, end = d.inner * (t + 1) / threads;
    for (int64_t o = 0; o < d.outer; ++o)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t base = o * w.outer + i * w.lane;
        const float* from = s + (o * n + i) * d.inner;
        float* to = y + o * d.lane * d.inner;
        if (w.inner == 0) {  // one index per row: a vectorized add
          float* row = to + load_index(index, base) * d.inner;
#pragma omp simd
          for (int64_t k = begin; k < end; ++k) row[k] += from[k];
        } else {
          for (int64_t k = begin; k < end; ++k) to[load_index(index, base + k * w.inner) * d.inner + k] += from[k];
        }
      }
  }
}

void execute(const sdk::OpCall& c, Exec& ex) {
  if (!supports(ex.backend(), c)) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn index: unsupported call");
  ex.backend().note_impl(c.op, "cpu_onednn:omp");
  if (c.op == INGOT_OP_INDEX_SELECT) {
    index_select(c);
  } else {
    scatter_add(c);
  }
}

}  // namespace

const OpFamily& index_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
