// FILL, COPY, CAST and ARANGE: one grid-stride kernel per output dtype; the source dtype of a cast
// is switched per element (a uniform branch) so that 9 kernels cover all 81 dtype pairs.
#include "k_common.cuh"

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
    out[off[0]] = cvt<T>(start + static_cast<double>(i) * step);
  }
}

}  // namespace

bool creation_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_out != 1) return false;
  const int32_t dt = c.out[0].dtype;
  switch (c.op) {
    case INGOT_OP_FILL: return c.n_in == 0 && has_dtype(INGOT_DTYPES_ANY, dt);
    case INGOT_OP_ARANGE: return c.n_in == 0 && has_dtype(INGOT_DTYPES_NUM, dt);
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
  const unsigned grid = grid_for(n, l);
  visit_dtype(out.dtype, "creation", [&](auto tag) {
    using T = decltype(tag);
    T* y = sdk::data_ptr<T>(out);
    if (c.op == INGOT_OP_FILL) {
      const Indexer<1> ix = make_indexer<1>(out, nullptr);
      fill_kernel<T><<<grid, kThreads, 0, l.stream>>>(y, ix, n, cvt<T>(sdk::attr<ingot_attr_scalar>(c.attrs).value));
    } else if (c.op == INGOT_OP_ARANGE) {
      if constexpr (!std::is_same_v<T, bool>) {
        const auto& a = sdk::attr<ingot_attr_arange>(c.attrs);
        const Indexer<1> ix = make_indexer<1>(out, nullptr);
        arange_kernel<T><<<grid, kThreads, 0, l.stream>>>(y, ix, n, a.start, a.step);
      }
    } else {
      const ingot_tensor_desc* ins[] = {&c.in[0]};
      const Indexer<2> ix = make_indexer<2>(out, ins);
      convert_kernel<T><<<grid, kThreads, 0, l.stream>>>(y, sdk::data_ptr<const void>(c.in[0]), c.in[0].dtype, ix, n,
                                                         all_dense(ix));
    }
  });
  check_launch("creation");
}

}  // namespace ingot::cuda
