// MATMUL through cuBLASLt. Row-major C = A B is computed as column-major C^T = B^T A^T, so each
// operand's strides pick its cuBLAS op (N or T) and leading dimension without copies. Batch dims
// broadcast; when they do not collapse into one stride the batch is looped. Bias and ReLU are
// cuBLASLt epilogues; GELU (erf form, which cuBLASLt lacks) runs as a kernel after the bias epilogue.
#include "op_matmul.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "kernels.h"

namespace ingot::cuda {
namespace {

// One operand as cuBLASLt sees it (column-major).
struct MatLayout {
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t rows = 0, cols = 0, ld = 0;  // of the stored matrix
};

// A row-major [r, c] matrix with strides (sr, sc) as a column-major layout whose op gives [c, r].
bool col_major_of(int64_t r, int64_t c, int64_t sr, int64_t sc, MatLayout& m) {
  if (sc == 1 || c == 1) {  // row-major: stored column-major as [c, r], op N
    const int64_t ld = r == 1 ? c : sr;
    if (ld < c || ld < 1) return false;
    m = {CUBLAS_OP_N, c, r, ld};
    return true;
  }
  if (sr == 1 || r == 1) {  // column-major [r, c]: transposing gives [c, r]
    const int64_t ld = c == 1 ? r : sc;
    if (ld < r || ld < 1) return false;
    m = {CUBLAS_OP_T, r, c, ld};
    return true;
  }
  return false;
}

cudaDataType_t cuda_type(int32_t dtype) {
  switch (dtype) {
    case INGOT_F16: return CUDA_R_16F;
    case INGOT_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

// Off by default (torch's default for matmul since 1.12); read per call so that a process (a
// benchmark) can compare both. Part of the plan key.
bool allow_tf32() {
  const char* v = std::getenv("INGOT_CUDA_ALLOW_TF32");
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

// Strides of an operand's batch dims over the output's batch shape (0 = broadcast).
void batch_strides(const ingot_tensor_desc& t, const ingot_tensor_desc& out, int64_t* s) {
  const int nb = out.ndim - 2, tb = t.ndim - 2, lead = nb - tb;
  for (int d = 0; d < nb; ++d) {
    const int k = d - lead;
    s[d] = (k < 0 || t.shape[k] == 1) ? 0 : t.strides[k];
  }
}

// One stride for the flattened batch, if the dims allow it.
bool collapse(const int64_t* shape, const int64_t* s, int nb, int64_t& stride) {
  stride = 0;
  int64_t expect = -1;
  for (int d = nb - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (expect < 0) {
      stride = s[d];
      expect = s[d] * shape[d];
    } else {
      if (s[d] != expect) return false;
      expect = s[d] * shape[d];
    }
  }
  return true;
}

struct Problem {
  MatLayout a_lt, b_lt;  // cuBLAS A = our B^T, cuBLAS B = our A^T
  int64_t m, n, k, batch;
  int64_t sa, sb, sc;    // batch strides (our a, b, out)
  int32_t dtype;
  int32_t epilogue;
  bool looped;  // batch dims do not flatten: one call per matrix
};

struct AlgoCache {
  std::mutex mu;
  std::map<std::string, cublasLtMatmulAlgo_t> algos;
};
AlgoCache& algo_cache() {
  static AlgoCache c;
  return c;
}

struct Descs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Descs() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

void set_batch(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride) {
  const int32_t count = static_cast<int32_t>(batch);
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
}

uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

void run_lt(DeviceContext& dev, cudaStream_t stream, const Problem& p, const void* a, const void* b, const void* bias,
            void* out) {
  Descs d;
  const cudaDataType_t t = cuda_type(p.dtype);
  const cublasComputeType_t compute =
      p.dtype == INGOT_F32 && allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d.op, compute, CUDA_R_32F));
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &p.a_lt.op, sizeof(p.a_lt.op)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &p.b_lt.op, sizeof(p.b_lt.op)));
  const auto epi = static_cast<cublasLtEpilogue_t>(p.epilogue);
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (bias != nullptr)
    INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.a, t, p.a_lt.rows, p.a_lt.cols, p.a_lt.ld));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.b, t, p.b_lt.rows, p.b_lt.cols, p.b_lt.ld));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.c, t, p.n, p.m, p.n));
  const int64_t batch = p.batch;
  if (batch > 1) {
    set_batch(d.a, batch, p.sb);
    set_batch(d.b, batch, p.sa);
    set_batch(d.c, batch, p.sc);
  }
  size_t ws_bytes = 0;
  void* ws = dev.matmul_workspace(ws_bytes);
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&d.pref));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes)));
  const uint32_t al_a = alignment(b), al_b = alignment(a), al_c = alignment(out);
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof(al_c)));

  // The plan key: everything the heuristic saw.
  char key[320];
  std::snprintf(key, sizeof(key), "%d/%d/%d %lld,%lld,%lld|%lld,%lld,%lld|%lld %lld,%lld,%lld e%d al%u,%u,%u",
                p.dtype, static_cast<int>(p.a_lt.op), static_cast<int>(p.b_lt.op), (long long)p.a_lt.rows,
                (long long)p.a_lt.cols, (long long)p.a_lt.ld, (long long)p.b_lt.rows, (long long)p.b_lt.cols,
                (long long)p.b_lt.ld, (long long)batch, (long long)p.sa, (long long)p.sb, (long long)p.sc, p.epilogue,
                al_a, al_b, al_c);
  cublasLtMatmulAlgo_t algo{};
  {
    AlgoCache& cache = algo_cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.algos.find(std::string(key) + (compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? " tf32" : ""));
    if (it != cache.algos.end()) {
      algo = it->second;
    } else {
      cublasLtMatmulHeuristicResult_t result{};
      int found = 0;
      INGOT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(dev.cublaslt(), d.op, d.a, d.b, d.c, d.c, d.pref, 1, &result, &found));
      if (found == 0)
        throw sdk::Failure(INGOT_ERR_UNSUPPORTED, std::string("cuda matmul: cuBLASLt has no algorithm for ") + key);
      algo = result.algo;
      cache.algos.emplace(std::string(key) + (compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? " tf32" : ""), algo);
    }
  }
  const float one = 1.0f, zero = 0.0f;
  INGOT_CUBLAS_CHECK(cublasLtMatmul(dev.cublaslt(), d.op, &one, b, d.a, a, d.b, &zero, out, d.c, out, d.c, &algo, ws,
                                    ws_bytes, stream));
}

}  // namespace

bool matmul_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_out != 1 || c.n_in < 2 || c.n_in > 3 || c.attrs == nullptr) return false;
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  const ingot_tensor_desc &a = c.in[0], &b = c.in[1], &y = c.out[0];
  const int32_t dt = y.dtype;
  if (dt != INGOT_F32 && dt != INGOT_F16 && dt != INGOT_BF16) return false;
  if (a.dtype != dt || b.dtype != dt || a.ndim < 2 || b.ndim < 2 || y.ndim < 2) return false;
  if (a.ndim > y.ndim || b.ndim > y.ndim || !sdk::is_contiguous(y)) return false;
  if (attr.has_bias && (c.n_in != 3 || c.in[2].dtype != dt || c.in[2].ndim != 1 || c.in[2].strides[0] != 1)) return false;
  if (attr.activation < INGOT_ACT_NONE || attr.activation > INGOT_ACT_GELU) return false;
  MatLayout m;
  return col_major_of(a.shape[a.ndim - 2], a.shape[a.ndim - 1], a.strides[a.ndim - 2], a.strides[a.ndim - 1], m) &&
         col_major_of(b.shape[b.ndim - 2], b.shape[b.ndim - 1], b.strides[b.ndim - 2], b.strides[b.ndim - 1], m);
}

void matmul_run(const sdk::OpCall& c, DeviceContext& dev, cudaStream_t stream) {
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  const ingot_tensor_desc &a = c.in[0], &b = c.in[1], &y = c.out[0];
  Problem p{};
  p.dtype = y.dtype;
  p.m = y.shape[y.ndim - 2];
  p.n = y.shape[y.ndim - 1];
  p.k = a.shape[a.ndim - 1];
  const int nb = y.ndim - 2;
  p.batch = 1;
  for (int d = 0; d < nb; ++d) p.batch *= y.shape[d];
  if (p.batch * p.m * p.n == 0) return;
  const Launch launch{stream, &dev.allocator(), dev.props().multiProcessorCount};
  const bool has_bias = attr.has_bias != 0;
  if (p.k == 0) {  // empty sum: out = bias (or 0), then the activation
    const ingot_attr_scalar zero{sizeof(ingot_attr_scalar), INGOT_ABI_MINOR, 0.0};
    creation_run(sdk::OpCall{INGOT_OP_FILL, nullptr, 0, &y, 1, &zero}, launch);
    if (has_bias) {
      const ingot_tensor_desc ins[2] = {y, c.in[2]};
      binary_run(sdk::OpCall{INGOT_OP_ADD, ins, 2, &y, 1, nullptr}, launch);
    }
  } else {
    col_major_of(b.shape[b.ndim - 2], b.shape[b.ndim - 1], b.strides[b.ndim - 2], b.strides[b.ndim - 1], p.a_lt);
    col_major_of(a.shape[a.ndim - 2], a.shape[a.ndim - 1], a.strides[a.ndim - 2], a.strides[a.ndim - 1], p.b_lt);
    int64_t sa[INGOT_MAX_DIMS] = {}, sb[INGOT_MAX_DIMS] = {}, sy[INGOT_MAX_DIMS] = {};
    batch_strides(a, y, sa);
    batch_strides(b, y, sb);
    batch_strides(y, y, sy);
    const bool ok = collapse(y.shape, sa, nb, p.sa) && collapse(y.shape, sb, nb, p.sb) && collapse(y.shape, sy, nb, p.sc);
    p.looped = !ok;
    p.epilogue = has_bias ? (attr.activation == INGOT_ACT_RELU ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                          : (attr.activation == INGOT_ACT_RELU ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    const void* bias = has_bias ? sdk::data_ptr<const void>(c.in[2]) : nullptr;
    if (!p.looped) {
      run_lt(dev, stream, p, sdk::data_ptr<const void>(a), sdk::data_ptr<const void>(b), bias, sdk::data_ptr(y));
    } else {
      // Batch dims that do not flatten: one call per matrix, offsets from the broadcast strides.
      const int64_t es = sdk::dtype_size(p.dtype);
      for (int64_t i = 0; i < p.batch; ++i) {
        int64_t rem = i, oa = 0, ob = 0, oy = 0;
        for (int d = nb - 1; d >= 0; --d) {
          const int64_t ci = rem % y.shape[d];
          rem /= y.shape[d];
          oa += ci * sa[d], ob += ci * sb[d], oy += ci * sy[d];
        }
        Problem one = p;
        one.batch = 1;
        one.looped = false;
        run_lt(dev, stream, one, sdk::data_ptr<const char>(a) + oa * es, sdk::data_ptr<const char>(b) + ob * es, bias,
               sdk::data_ptr<char>(y) + oy * es);
      }
    }
  }
  if (attr.activation == INGOT_ACT_GELU || (p.k == 0 && attr.activation == INGOT_ACT_RELU)) {
    const int32_t op = attr.activation == INGOT_ACT_GELU ? INGOT_OP_GELU : INGOT_OP_RELU;
    unary_run(sdk::OpCall{op, &y, 1, &y, 1, nullptr}, launch);
  }
}

}  // namespace ingot::cuda
