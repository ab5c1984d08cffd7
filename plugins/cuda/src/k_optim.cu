// Multi-tensor ops: GLOBAL_NORM (sum of squares in double, then sqrt), SGD_UPDATE and ADAM_UPDATE
// with torch.optim's semantics (computed in double, state rounded to its dtype before use, like
// the reference). Launches are fused: one per chunk of up to kMaxTensors tensors, blockIdx.y picks
// the tensor. GLOBAL_NORM is reproducible: every block writes its partial sum to its own slot and
// one final block adds the slots in a fixed order (no atomics; the block count per tensor depends
// only on the sizes, not on the GPU).
#include <cmath>
#include <vector>

#include "k_common.cuh"

namespace ingot::cuda {
namespace {

constexpr int kMaxTensors = 24;

struct TensorList {
  void* ptr[5][kMaxTensors];
  int32_t dtype[5][kMaxTensors];
  int64_t numel[kMaxTensors];
  int count;
};

// The op's attributes as the ABI gives them, and whether the momentum buffer is read.
struct SgdArgs {
  ingot_attr_sgd a;
  int use_buf;
};

__global__ void sgd_kernel(TensorList t, SgdArgs args) {
  const ingot_attr_sgd& a = args.a;
  const int k = blockIdx.y;
  const int64_t n = t.numel[k];
  void* p = t.ptr[0][k];
  const void* g = t.ptr[1][k];
  void* b = t.ptr[2][k];
  INGOT_GRID_STRIDE(i, n) {
    const double w = load_as<double>(p, t.dtype[0][k], i);
    double d = load_as<double>(g, t.dtype[1][k], i) + a.weight_decay * w;
    if (args.use_buf) {
      const double m = a.first_step ? d : a.momentum * load_as<double>(b, t.dtype[2][k], i) + (1.0 - a.dampening) * d;
      store_as<double>(b, t.dtype[2][k], i, m);
      const double mr = load_as<double>(b, t.dtype[2][k], i);
      d = a.nesterov ? d + a.momentum * mr : mr;
    }
    store_as<double>(p, t.dtype[0][k], i, w - a.lr * d);
  }
}

// The op's attributes and the step's bias corrections, computed once on the host.
struct AdamArgs {
  ingot_attr_adam a;
  double step_size, bias2_sqrt;
};

__global__ void adam_kernel(TensorList t, AdamArgs args) {
  const ingot_attr_adam& a = args.a;
  const int k = blockIdx.y;
  const int64_t n = t.numel[k];
  INGOT_GRID_STRIDE(i, n) {
    double w = load_as<double>(t.ptr[0][k], t.dtype[0][k], i);
    double g = load_as<double>(t.ptr[1][k], t.dtype[1][k], i);
    if (a.decoupled) {
      w *= 1.0 - a.lr * a.weight_decay;
    } else {
      g += a.weight_decay * w;
    }
    const double m = a.beta1 * load_as<double>(t.ptr[2][k], t.dtype[2][k], i) + (1.0 - a.beta1) * g;
    const double v = a.beta2 * load_as<double>(t.ptr[3][k], t.dtype[3][k], i) + (1.0 - a.beta2) * g * g;
    store_as<double>(t.ptr[2][k], t.dtype[2][k], i, m);
    store_as<double>(t.ptr[3][k], t.dtype[3][k], i, v);
    const double mr = load_as<double>(t.ptr[2][k], t.dtype[2][k], i);
    double vr = load_as<double>(t.ptr[3][k], t.dtype[3][k], i);
    if (a.amsgrad) {
      vr = fmax(vr, load_as<double>(t.ptr[4][k], t.dtype[4][k], i));
      store_as<double>(t.ptr[4][k], t.dtype[4][k], i, vr);
    }
    const double denom = sqrt(vr) / args.bias2_sqrt + a.eps;
    store_as<double>(t.ptr[0][k], t.dtype[0][k], i, w - args.step_size * mr / denom);
  }
}

// At most this many partial sums per tensor (a fixed number, so that the grouping of the sum does
// not change with the GPU's SM count).
constexpr int64_t kNormBlocks = 512;

int64_t norm_blocks(int64_t n) {
  const int64_t want = (n + kThreads - 1) / kThreads;
  return want < 1 ? 1 : (want < kNormBlocks ? want : kNormBlocks);
}

struct NormList {
  const void* ptr[kMaxTensors];
  int32_t dtype[kMaxTensors];
  int64_t numel[kMaxTensors];
  int64_t slot[kMaxTensors];  // first partial-sum slot of each tensor; gridDim.x slots each
  int count;
};

// Contiguous tensors: block (b, k) writes the sum of squares of its share of tensor k.
__global__ void sum_squares_kernel(NormList t, double* partials) {
  const int k = blockIdx.y;
  const int64_t n = t.numel[k];
  double s = 0.0;
  INGOT_GRID_STRIDE(i, n) {
    const double v = load_as<double>(t.ptr[k], t.dtype[k], i);
    s += v * v;
  }
  s = block_sum(s);
  if (threadIdx.x == 0) partials[t.slot[k] + blockIdx.x] = s;
}

// One strided tensor (a view): the same with offsets.
__global__ void sum_squares_strided_kernel(const void* x, int32_t dtype, Indexer<1> ix, int64_t n, double* partials) {
  int64_t off[1];
  double s = 0.0;
  INGOT_GRID_STRIDE(i, n) {
    ix.offsets(i, off);
    const double v = load_as<double>(x, dtype, off[0]);
    s += v * v;
  }
  s = block_sum(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// One block: thread t adds slots t, t + blockDim.x, ... in order, then the block's fixed tree.
__global__ void finish_norm_kernel(const double* partials, int64_t count, void* out, int32_t dtype) {
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) s += partials[i];
  s = block_sum(s);
  if (threadIdx.x == 0) store_as<double>(out, dtype, 0, sqrt(s));
}

void global_norm(const sdk::OpCall& c, const Launch& l) {
  // Slots: contiguous tensors in groups of kMaxTensors (gridDim.x slots each, the group's largest
  // tensor deciding), each strided tensor alone; planned on the host first.
  std::vector<NormList> groups;
  std::vector<int> strided;
  std::vector<int64_t> group_blocks, strided_slot;
  int64_t slots = 0;
  NormList cur{};
  int64_t largest = 0;
  const auto close_group = [&] {
    if (cur.count == 0) return;
    const int64_t blocks = norm_blocks(largest);
    for (int k = 0; k < cur.count; ++k) cur.slot[k] = slots + k * blocks;
    slots += cur.count * blocks;
    groups.push_back(cur);
    group_blocks.push_back(blocks);
    cur = NormList{};
    largest = 0;
  };
  for (int k = 0; k < c.n_in; ++k) {
    const int64_t n = sdk::numel(c.in[k]);
    if (n == 0) continue;
    if (!sdk::is_contiguous(c.in[k])) {
      strided.push_back(k);
      strided_slot.push_back(slots);
      slots += norm_blocks(n);
      continue;
    }
    cur.ptr[cur.count] = sdk::data_ptr<const void>(c.in[k]);
    cur.dtype[cur.count] = c.in[k].dtype;
    cur.numel[cur.count] = n;
    largest = n > largest ? n : largest;
    if (++cur.count == kMaxTensors) close_group();
  }
  close_group();
  Scratch partials(*l.mem, static_cast<size_t>(slots) * sizeof(double));
  double* p = partials.as<double>();
  for (size_t g = 0; g < groups.size(); ++g) {
    const dim3 grid(static_cast<unsigned>(group_blocks[g]), static_cast<unsigned>(groups[g].count));
    sum_squares_kernel<<<grid, kThreads, 0, l.stream>>>(groups[g], p);
    check_launch("global_norm");
  }
  for (size_t s = 0; s < strided.size(); ++s) {
    const ingot_tensor_desc& t = c.in[strided[s]];
    const int64_t n = sdk::numel(t);
    const Indexer<1> ix = make_indexer<1>(t, nullptr);
    sum_squares_strided_kernel<<<static_cast<unsigned>(norm_blocks(n)), kThreads, 0, l.stream>>>(
        sdk::data_ptr<const void>(t), t.dtype, ix, n, p + strided_slot[s]);
    check_launch("global_norm");
  }
  finish_norm_kernel<<<1, kThreads, 0, l.stream>>>(p, slots, sdk::data_ptr(c.out[0]), c.out[0].dtype);
  check_launch("global_norm");
}

bool contiguous_same_shape(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  if (!sdk::is_contiguous(a) || !sdk::is_contiguous(b) || a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d]) return false;
  return true;
}

// Launches `kernel` over groups of `per` tensors (param first), kMaxTensors groups at a time.
template <class Args>
void launch_groups(const sdk::OpCall& c, int per, void (*kernel)(TensorList, Args), const Args& args, const Launch& l) {
  for (int first = 0; first < c.n_in; first += per * kMaxTensors) {
    TensorList t{};
    int64_t largest = 0;
    for (int k = first; k < c.n_in && t.count < kMaxTensors; k += per, ++t.count) {
      for (int j = 0; j < per; ++j) {
        t.ptr[j][t.count] = sdk::data_ptr(c.in[k + j]);
        t.dtype[j][t.count] = c.in[k + j].dtype;
      }
      t.numel[t.count] = sdk::numel(c.in[k]);
      largest = t.numel[t.count] > largest ? t.numel[t.count] : largest;
    }
    if (largest == 0) continue;
    const dim3 grid(grid_for(largest, l), static_cast<unsigned>(t.count));
    kernel<<<grid, kThreads, 0, l.stream>>>(t, args);
    check_launch("optimizer update");
  }
}

}  // namespace

bool optim_supports(const sdk::OpCall& c) {
  if (c.op == INGOT_OP_GLOBAL_NORM) {
    if (!all_device_strided(c)) return false;
    for (int i = 0; i < c.n_in; ++i)
      if (!has_dtype(INGOT_DTYPES_FLOAT, c.in[i].dtype)) return false;
    return c.n_out == 1 && sdk::numel(c.out[0]) == 1 && has_dtype(INGOT_DTYPES_FLOAT, c.out[0].dtype);
  }
  if (c.n_out != 0) return false;
  if (c.op == INGOT_OP_SGD_UPDATE ? !has_attr<ingot_attr_sgd>(c.attrs) : !has_attr<ingot_attr_adam>(c.attrs))
    return false;
  int per = 3;
  bool use_buf = true;
  if (c.op == INGOT_OP_SGD_UPDATE) {
    use_buf = sdk::attr<ingot_attr_sgd>(c.attrs).momentum != 0.0;
  } else {
    const auto& a = sdk::attr<ingot_attr_adam>(c.attrs);
    per = a.amsgrad ? 5 : 4;
    if (a.step < 1) return false;
  }
  if (c.n_in % per != 0) return false;
  for (int k = 0; k < c.n_in; k += per)
    for (int j = 0; j < per; ++j) {
      if (j == 2 && !use_buf) continue;  // SGD without momentum: the buffer may be absent (any desc)
      const ingot_tensor_desc& t = c.in[k + j];
      if (!is_device_strided(t) || !has_dtype(INGOT_DTYPES_FLOAT, t.dtype)) return false;
      if (j > 0 && !contiguous_same_shape(c.in[k], t)) return false;
    }
  return true;
}

void optim_run(const sdk::OpCall& c, const Launch& l) {
  if (c.op == INGOT_OP_GLOBAL_NORM) return global_norm(c, l);
  if (c.op == INGOT_OP_SGD_UPDATE) {
    const auto& a = sdk::attr<ingot_attr_sgd>(c.attrs);
    return launch_groups(c, 3, sgd_kernel, SgdArgs{a, a.momentum != 0.0}, l);
  }
  const auto& a = sdk::attr<ingot_attr_adam>(c.attrs);
  const double step = static_cast<double>(a.step);
  const AdamArgs args{a, a.lr / (1.0 - std::pow(a.beta1, step)), std::sqrt(1.0 - std::pow(a.beta2, step))};
  launch_groups(c, a.amsgrad ? 5 : 4, adam_kernel, args, l);
}

}  // namespace ingot::cuda
