// Elementwise ops with NumPy broadcasting: unary (NEG .. LOGICAL_NOT), binary arithmetic,
// comparisons, logical ops, WHERE and RELU_BWD. One kernel per dtype and arity; the op is a uniform
// runtime switch so that compile time stays small. f16/bf16 compute in float. Dims are coalesced
// first; contiguous 16-byte aligned operands move 16 bytes per access (Pack).
#include "k_common.cuh"

namespace ingot::cuda {
namespace {

struct UnaryAttrs {
  float f0, f1;       // softplus beta, threshold
  double d0, d1;      // clamp min, max (also softplus in double)
  int has_min, has_max;
};

template <class C>
__device__ __forceinline__ C wrap_add(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) + static_cast<std::make_unsigned_t<C>>(b));
  else return a + b;
}
template <class C>
__device__ __forceinline__ C wrap_sub(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) - static_cast<std::make_unsigned_t<C>>(b));
  else return a - b;
}
template <class C>
__device__ __forceinline__ C wrap_mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) * static_cast<std::make_unsigned_t<C>>(b));
  else return a * b;
}

template <class C>
__device__ __forceinline__ bool is_negative(C x) {
  if constexpr (std::is_unsigned_v<C>) return false;
  else return x < C(0);
}

template <class C>
__device__ C unary_op(int32_t op, C x, const UnaryAttrs& a) {
  switch (op) {
    case INGOT_OP_NEG: return wrap_sub(C(0), x);
    case INGOT_OP_ABS: return is_negative(x) ? wrap_sub(C(0), x) : x;
    case INGOT_OP_RELU:
      if constexpr (std::is_floating_point_v<C>) {
        if (x != x) return x;
      }
      return x > C(0) ? x : C(0);
    case INGOT_OP_SIGN: return static_cast<C>((C(0) < x) - is_negative(x));
    case INGOT_OP_CLAMP:
      if constexpr (std::is_floating_point_v<C>) {
        if (x != x) return x;
      }
      if (a.has_min && static_cast<double>(x) < a.d0) x = cvt<C>(a.d0);
      if (a.has_max && static_cast<double>(x) > a.d1) x = cvt<C>(a.d1);
      return x;
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case INGOT_OP_EXP: return exp(x);
      case INGOT_OP_LOG: return log(x);
      case INGOT_OP_LOG1P: return log1p(x);
      case INGOT_OP_SQRT: return sqrt(x);
      case INGOT_OP_RSQRT: return C(1) / sqrt(x);
      case INGOT_OP_SIN: return sin(x);
      case INGOT_OP_COS: return cos(x);
      case INGOT_OP_TANH: return tanh(x);
      case INGOT_OP_SIGMOID: return C(1) / (C(1) + exp(-x));
      case INGOT_OP_GELU: return C(0.5) * x * (C(1) + erf(x * C(0.70710678118654752440)));
      case INGOT_OP_ERF: return erf(x);
      case INGOT_OP_SOFTPLUS: {
        const C beta = std::is_same_v<C, double> ? C(a.d0) : C(a.f0);
        const C threshold = std::is_same_v<C, double> ? C(a.d1) : C(a.f1);
        if (x * beta > threshold) return x;
        return log1p(exp(x * beta)) / beta;
      }
      case INGOT_OP_FLOOR: return floor(x);
      case INGOT_OP_CEIL: return ceil(x);
      case INGOT_OP_ROUND: return rint(x);
      case INGOT_OP_RECIPROCAL: return C(1) / x;
      default: break;
    }
  }
  return x;
}

template <class T>
__global__ void unary_kernel(int32_t op, T* out, const T* in, Indexer<2> ix, int64_t n, bool dense, UnaryAttrs a) {
  using C = compute_t<T>;
  int64_t off[2];
  INGOT_GRID_STRIDE(i, n) {
    if (dense) {
      out[i] = cvt<T>(unary_op<C>(op, cvt<C>(in[i]), a));
    } else {
      ix.offsets(i, off);
      out[off[0]] = cvt<T>(unary_op<C>(op, cvt<C>(in[off[1]]), a));
    }
  }
}

// Contiguous operands aligned to 16 bytes: one Pack (16 bytes) per thread and step, then the last
// n % kPack elements one by one.
template <class T>
__global__ void unary_packed_kernel(int32_t op, T* out, const T* in, int64_t n, UnaryAttrs a) {
  using C = compute_t<T>;
  const int64_t packs = n / kPack<T>;
  INGOT_GRID_STRIDE(p, packs) {
    const Pack<T> x = reinterpret_cast<const Pack<T>*>(in)[p];
    Pack<T> y;
#pragma unroll
    for (int k = 0; k < kPack<T>; ++k) y.v[k] = cvt<T>(unary_op<C>(op, cvt<C>(x.v[k]), a));
    reinterpret_cast<Pack<T>*>(out)[p] = y;
  }
  INGOT_GRID_STRIDE(t, n - packs * kPack<T>) {
    const int64_t i = packs * kPack<T> + t;
    out[i] = cvt<T>(unary_op<C>(op, cvt<C>(in[i]), a));
  }
}

__global__ void logical_not_kernel(bool* out, const void* in, int32_t in_dtype, Indexer<2> ix, int64_t n) {
  int64_t off[2];
  INGOT_GRID_STRIDE(i, n) {
    ix.offsets(i, off);
    out[off[0]] = !load_as<bool>(in, in_dtype, off[1]);
  }
}

template <class C>
__device__ __forceinline__ C binary_op(int32_t op, C a, C b) {
  switch (op) {
    case INGOT_OP_ADD: return wrap_add(a, b);
    case INGOT_OP_SUB: return wrap_sub(a, b);
    case INGOT_OP_MUL: return wrap_mul(a, b);
    case INGOT_OP_RELU_BWD: return b > C(0) ? a : C(0);  // (grad, x)
    case INGOT_OP_MAXIMUM:
    case INGOT_OP_MINIMUM:
      if constexpr (std::is_floating_point_v<C>) {
        if (a != a || b != b) return C(NAN);
      }
      return op == INGOT_OP_MAXIMUM ? (a > b ? a : b) : (a < b ? a : b);
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    if (op == INGOT_OP_DIV) return a / b;
    if (op == INGOT_OP_POW) return pow(a, b);
  }
  return a;
}

template <class C>
__device__ __forceinline__ bool compare_op(int32_t op, C a, C b) {
  switch (op) {
    case INGOT_OP_EQ: return a == b;
    case INGOT_OP_NE: return a != b;
    case INGOT_OP_LT: return a < b;
    case INGOT_OP_LE: return a <= b;
    case INGOT_OP_GT: return a > b;
    default: return a >= b;
  }
}

template <class T>
__global__ void binary_kernel(int32_t op, T* out, const T* x, const T* y, Indexer<3> ix, int64_t n, bool dense) {
  using C = compute_t<T>;
  int64_t off[3];
  INGOT_GRID_STRIDE(i, n) {
    if (dense) {
      out[i] = cvt<T>(binary_op<C>(op, cvt<C>(x[i]), cvt<C>(y[i])));
    } else {
      ix.offsets(i, off);
      out[off[0]] = cvt<T>(binary_op<C>(op, cvt<C>(x[off[1]]), cvt<C>(y[off[2]])));
    }
  }
}

// binary_kernel's contiguous case with 16-byte aligned operands, like unary_packed_kernel.
template <class T>
__global__ void binary_packed_kernel(int32_t op, T* out, const T* x, const T* y, int64_t n) {
  using C = compute_t<T>;
  const int64_t packs = n / kPack<T>;
  INGOT_GRID_STRIDE(p, packs) {
    const Pack<T> a = reinterpret_cast<const Pack<T>*>(x)[p];
    const Pack<T> b = reinterpret_cast<const Pack<T>*>(y)[p];
    Pack<T> r;
#pragma unroll
    for (int k = 0; k < kPack<T>; ++k) r.v[k] = cvt<T>(binary_op<C>(op, cvt<C>(a.v[k]), cvt<C>(b.v[k])));
    reinterpret_cast<Pack<T>*>(out)[p] = r;
  }
  INGOT_GRID_STRIDE(t, n - packs * kPack<T>) {
    const int64_t i = packs * kPack<T> + t;
    out[i] = cvt<T>(binary_op<C>(op, cvt<C>(x[i]), cvt<C>(y[i])));
  }
}

template <class T>
__global__ void compare_kernel(int32_t op, bool* out, const T* x, const T* y, Indexer<3> ix, int64_t n) {
  using C = compute_t<T>;
  int64_t off[3];
  INGOT_GRID_STRIDE(i, n) {
    ix.offsets(i, off);
    out[off[0]] = compare_op<C>(op, cvt<C>(x[off[1]]), cvt<C>(y[off[2]]));
  }
}

__global__ void logical_kernel(bool is_and, bool* out, const void* x, int32_t xt, const void* y, int32_t yt,
                               Indexer<3> ix, int64_t n) {
  int64_t off[3];
  INGOT_GRID_STRIDE(i, n) {
    ix.offsets(i, off);
    const bool a = load_as<bool>(x, xt, off[1]), b = load_as<bool>(y, yt, off[2]);
    out[off[0]] = is_and ? (a && b) : (a || b);
  }
}

template <class T>
__global__ void where_kernel(T* out, const void* cond, int32_t ct, const T* x, const T* y, Indexer<4> ix, int64_t n) {
  int64_t off[4];
  INGOT_GRID_STRIDE(i, n) {
    ix.offsets(i, off);
    out[off[0]] = load_as<bool>(cond, ct, off[1]) ? x[off[2]] : y[off[3]];
  }
}

bool is_compare(int32_t op) {
  switch (op) {
    case INGOT_OP_EQ:
    case INGOT_OP_NE:
    case INGOT_OP_LT:
    case INGOT_OP_LE:
    case INGOT_OP_GT:
    case INGOT_OP_GE: return true;
    default: return false;
  }
}

}  // namespace

bool unary_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_in != 1 || c.n_out != 1 || !broadcasts_to(c.in[0], c.out[0])) return false;
  const int32_t dt = c.in[0].dtype;
  // Their attributes are read on the host in unary_run: without them the call is not ours.
  if (c.op == INGOT_OP_SOFTPLUS && !has_attr<ingot_attr_softplus>(c.attrs)) return false;
  if (c.op == INGOT_OP_CLAMP && !has_attr<ingot_attr_clamp>(c.attrs)) return false;
  if (c.op == INGOT_OP_LOGICAL_NOT) return c.out[0].dtype == INGOT_BOOL;
  if (c.out[0].dtype != dt) return false;
  const bool numeric_op = c.op == INGOT_OP_NEG || c.op == INGOT_OP_ABS || c.op == INGOT_OP_RELU ||
                          c.op == INGOT_OP_SIGN || c.op == INGOT_OP_CLAMP;
  return has_dtype(numeric_op ? INGOT_DTYPES_NUM : INGOT_DTYPES_FLOAT, dt);
}

void unary_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc& out = c.out[0];
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  const ingot_tensor_desc* ins[] = {&c.in[0]};
  Indexer<2> ix = make_indexer<2>(out, ins);
  flatten(ix);
  const unsigned grid = grid_for(n, l);
  if (c.op == INGOT_OP_LOGICAL_NOT) {
    logical_not_kernel<<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<bool>(out), sdk::data_ptr<const void>(c.in[0]),
                                                        c.in[0].dtype, ix, n);
    return check_launch("logical_not");
  }
  UnaryAttrs a{};
  if (c.op == INGOT_OP_SOFTPLUS) {
    const auto& s = sdk::attr<ingot_attr_softplus>(c.attrs);
    a.d0 = s.beta, a.d1 = s.threshold, a.f0 = static_cast<float>(s.beta), a.f1 = static_cast<float>(s.threshold);
  } else if (c.op == INGOT_OP_CLAMP) {
    const auto& s = sdk::attr<ingot_attr_clamp>(c.attrs);
    a.d0 = s.min, a.d1 = s.max, a.has_min = s.has_min, a.has_max = s.has_max;
  }
  visit_dtype(out.dtype, "unary", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T* y = sdk::data_ptr<T>(out);
      const T* x = sdk::data_ptr<const T>(c.in[0]);
      const bool dense = all_dense(ix);
      if (dense && aligned16(y) && aligned16(x)) {
        unary_packed_kernel<T><<<grid_for(n / kPack<T> + 1, l), kThreads, 0, l.stream>>>(c.op, y, x, n, a);
      } else {
        unary_kernel<T><<<grid, kThreads, 0, l.stream>>>(c.op, y, x, ix, n, dense, a);
      }
    }
  });
  check_launch("unary");
}

bool epilogue_activation(int32_t activation) {
  return activation == INGOT_ACT_NONE || activation == INGOT_ACT_RELU || activation == INGOT_ACT_GELU ||
         activation == INGOT_ACT_RELU6;
}

void activation_run(int32_t activation, const ingot_tensor_desc& y, const Launch& l) {
  if (activation == INGOT_ACT_RELU6) {
    const ingot_attr_clamp clip{sizeof(ingot_attr_clamp), INGOT_ABI_MINOR, 1, 1, 0.0, 6.0};
    return unary_run(sdk::OpCall{INGOT_OP_CLAMP, &y, 1, &y, 1, &clip}, l);
  }
  const int32_t op = activation == INGOT_ACT_GELU ? INGOT_OP_GELU : INGOT_OP_RELU;
  unary_run(sdk::OpCall{op, &y, 1, &y, 1, nullptr}, l);
}

bool binary_supports(const sdk::OpCall& c) {
  const int n_in = c.op == INGOT_OP_WHERE ? 3 : 2;
  if (!all_device_strided(c) || c.n_in != n_in || c.n_out != 1) return false;
  for (int i = 0; i < n_in; ++i)
    if (!broadcasts_to(c.in[i], c.out[0])) return false;
  const int32_t out = c.out[0].dtype;
  if (c.op == INGOT_OP_WHERE) return c.in[1].dtype == out && c.in[2].dtype == out;
  if (c.op == INGOT_OP_LOGICAL_AND || c.op == INGOT_OP_LOGICAL_OR) return out == INGOT_BOOL;
  if (is_compare(c.op)) {
    const uint32_t mask = (c.op == INGOT_OP_EQ || c.op == INGOT_OP_NE) ? INGOT_DTYPES_ANY : INGOT_DTYPES_NUM;
    return out == INGOT_BOOL && c.in[1].dtype == c.in[0].dtype && has_dtype(mask, c.in[0].dtype);
  }
  const bool float_only = c.op == INGOT_OP_DIV || c.op == INGOT_OP_POW || c.op == INGOT_OP_RELU_BWD;
  const uint32_t mask = float_only ? INGOT_DTYPES_FLOAT : INGOT_DTYPES_NUM;
  return c.in[0].dtype == out && c.in[1].dtype == out && has_dtype(mask, out);
}

void binary_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc& out = c.out[0];
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  const unsigned grid = grid_for(n, l);
  if (c.op == INGOT_OP_WHERE) {
    const ingot_tensor_desc* ins[] = {&c.in[0], &c.in[1], &c.in[2]};
    Indexer<4> ix = make_indexer<4>(out, ins);
    flatten(ix);
    visit_dtype(out.dtype, "where", [&](auto tag) {
      using T = decltype(tag);
      where_kernel<T><<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<T>(out), sdk::data_ptr<const void>(c.in[0]),
                                                       c.in[0].dtype, sdk::data_ptr<const T>(c.in[1]),
                                                       sdk::data_ptr<const T>(c.in[2]), ix, n);
    });
    return check_launch("where");
  }
  const ingot_tensor_desc* ins[] = {&c.in[0], &c.in[1]};
  Indexer<3> ix = make_indexer<3>(out, ins);
  flatten(ix);
  if (c.op == INGOT_OP_LOGICAL_AND || c.op == INGOT_OP_LOGICAL_OR) {
    logical_kernel<<<grid, kThreads, 0, l.stream>>>(c.op == INGOT_OP_LOGICAL_AND, sdk::data_ptr<bool>(out),
                                                    sdk::data_ptr<const void>(c.in[0]), c.in[0].dtype,
                                                    sdk::data_ptr<const void>(c.in[1]), c.in[1].dtype, ix, n);
    return check_launch("logical");
  }
  visit_dtype(c.in[0].dtype, "binary", [&](auto tag) {
    using T = decltype(tag);
    const T* x = sdk::data_ptr<const T>(c.in[0]);
    const T* y = sdk::data_ptr<const T>(c.in[1]);
    if (is_compare(c.op)) {
      compare_kernel<T><<<grid, kThreads, 0, l.stream>>>(c.op, sdk::data_ptr<bool>(out), x, y, ix, n);
    } else if constexpr (!std::is_same_v<T, bool>) {
      T* z = sdk::data_ptr<T>(out);
      const bool dense = all_dense(ix);
      if (dense && aligned16(z) && aligned16(x) && aligned16(y)) {
        binary_packed_kernel<T><<<grid_for(n / kPack<T> + 1, l), kThreads, 0, l.stream>>>(c.op, z, x, y, n);
      } else {
        binary_kernel<T><<<grid, kThreads, 0, l.stream>>>(c.op, z, x, y, ix, n, dense);
      }
    }
  });
  check_launch("binary");
}

}  // namespace ingot::cuda
