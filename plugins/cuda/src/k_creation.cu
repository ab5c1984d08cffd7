// FILL, COPY, CAST and ARANGE: one grid-stride kernel per output dtype; the source dtype of a cast
// is switched per element (a uniform branch) so that 9 kernels cover all 81 dtype pairs. A copy
// whose source and destination may share bytes (x[1:] = x[:-1]) goes through scratch, like the
// reference's staged copy: threads would otherwise read elements others already overwrote.
#include "k_common.cuh"
#include "overlap.h"

namespace ingot::cuda {
namespace {

template <class T>
__global__ void fill_kernel(T* out, Indexer<1> ix, int64_t n, T value) {
  int64_t off[1];
  INGOT_GRID_STRIDE(i, n) {
    ix.offsets(i, off);
    out[off[0]] = value;
  }
}

// COPY and CAST: out[i] = convert(in[i]), `in` broadcast to `out`'s shape.
template <class T>
__global__ void convert_kernel(T* out, const void* in, int32_t in_dtype, Indexer<2> ix, int64_t n, bool dense) {
  int64_t off[2];
  INGOT_GRID_STRIDE(i, n) {
    if (dense) {
      out[i] = load_as<T>(in, in_dtype, i);
    } else {
      ix.offsets(i, off);
      out[off[0]] = load_as<T>(in, in_dtype, off[1]);
    }
  }
}

template <class T>
__global__ void arange_kernel(T* out, Indexer<1> ix, int64_t n, double start, double step) {
  int64_t off[1];
  INGOT_GRID_STRIDE(i, n) {
    ix.offsets(i, off);
    // Rounded product, then rounded sum: what the reference computes (no FMA contraction).
    out[off[0]] = cvt<T>(__dadd_rn(start, __dmul_rn(static_cast<double>(i), step)));
  }
}

// out[i] = convert(in[i]) for `in` broadcast to `out`.
void launch_convert(const ingot_tensor_desc& out, const ingot_tensor_desc& in, int64_t n, const Launch& l) {
  const ingot_tensor_desc* ins[] = {&in};
  const Indexer<2> ix = make_indexer<2>(out, ins);
  visit_dtype(out.dtype, "copy", [&](auto tag) {
    using T = decltype(tag);
    convert_kernel<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(sdk::data_ptr<T>(out), sdk::data_ptr<const void>(in),
                                                                 in.dtype, ix, n, all_dense(ix));
  });
  check_launch("copy");
}

// A contiguous descriptor of `like`'s shape and device, of `dtype`, over `data`.
ingot_tensor_desc contiguous_desc(const ingot_tensor_desc& like, int32_t dtype, void* data) {
  ingot_tensor_desc d = like;
  d.dtype = dtype;
  d.data = data;
  d.byte_offset = 0;
  int64_t stride = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    d.strides[i] = stride;
    stride *= d.shape[i];
  }
  d.nbytes = stride * sdk::dtype_size(dtype);
  return d;
}

}  // namespace

bool creation_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_out != 1) return false;
  const int32_t dt = c.out[0].dtype;
  switch (c.op) {
    case INGOT_OP_FILL:
      return c.n_in == 0 && has_attr<ingot_attr_scalar>(c.attrs) && has_dtype(INGOT_DTYPES_ANY, dt);
    case INGOT_OP_ARANGE:
      return c.n_in == 0 && has_attr<ingot_attr_arange>(c.attrs) && has_dtype(INGOT_DTYPES_NUM, dt);
    case INGOT_OP_COPY:
      return c.n_in == 1 && c.in[0].dtype == dt && broadcasts_to(c.in[0], c.out[0]) && has_dtype(INGOT_DTYPES_ANY, dt);
    case INGOT_OP_CAST:
      return c.n_in == 1 && broadcasts_to(c.in[0], c.out[0]) && has_dtype(INGOT_DTYPES_ANY, dt) &&
             has_dtype(INGOT_DTYPES_ANY, c.in[0].dtype);
    default: return false;
  }
}

void creation_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc& out = c.out[0];
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  if (c.op == INGOT_OP_COPY || c.op == INGOT_OP_CAST) {
    const ingot_tensor_desc& in = c.in[0];
    if (!may_overlap(out, in)) return launch_convert(out, in, n, l);
    Scratch staged(*l.mem, static_cast<size_t>(n * sdk::dtype_size(in.dtype)));
    const ingot_tensor_desc tmp = contiguous_desc(out, in.dtype, staged.get());
    launch_convert(tmp, in, n, l);  // every read before any write; scratch is stream-ordered
    return launch_convert(out, tmp, n, l);
  }
  const unsigned grid = grid_for(n, l);
  const Indexer<1> ix = make_indexer<1>(out, nullptr);
  visit_dtype(out.dtype, "creation", [&](auto tag) {
    using T = decltype(tag);
    T* y = sdk::data_ptr<T>(out);
    if (c.op == INGOT_OP_FILL) {
      fill_kernel<T><<<grid, kThreads, 0, l.stream>>>(y, ix, n, cvt<T>(sdk::attr<ingot_attr_scalar>(c.attrs).value));
    } else if constexpr (!std::is_same_v<T, bool>) {
      const auto& a = sdk::attr<ingot_attr_arange>(c.attrs);
      arange_kernel<T><<<grid, kThreads, 0, l.stream>>>(y, ix, n, a.start, a.step);
    }
  });
  check_launch(op_name(c.op));
}

}  // namespace ingot::cuda
