// The convolution algorithm pass: candidates, their timing on scratch memory, the choice.
#include "ingot/graph/conv_algorithm.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"

namespace ingot::graph {

namespace {

bool is_conv(const Node& n) {
  return !n.reorder && (n.op == INGOT_OP_CONV2D || n.op == INGOT_OP_CONV2D_BWD_DATA || n.op == INGOT_OP_CONV2D_BWD_WEIGHT) &&
         n.attrs.size() >= sizeof(ingot_attr_conv2d);
}

ingot_attr_conv2d conv_attr(const Node& n) {
  ingot_attr_conv2d a;
  std::memcpy(&a, n.attrs.data(), sizeof a);
  return a;
}

/// A 3x3, stride-1, undilated, ungrouped f32 convolution on the host: where Winograd kernels exist.
bool candidate(const Node& n) {
  if (!is_conv(n) || n.backend == nullptr) return false;
  const ingot_attr_conv2d a = conv_attr(n);
  const ingot_tensor_desc& w = n.op == INGOT_OP_CONV2D_BWD_WEIGHT ? n.outputs[0].desc : n.inputs[1].desc;
  return a.stride[0] == 1 && a.stride[1] == 1 && a.dilation[0] == 1 && a.dilation[1] == 1 && a.groups == 1 &&
         w.ndim == 4 && w.shape[2] == 3 && w.shape[3] == 3 && w.dtype == INGOT_F32 &&
         n.inputs[0].desc.device_kind == INGOT_DEVICE_CPU;
}

std::vector<unsigned char> with_algorithm(const Node& n, int32_t algorithm) {
  ingot_attr_conv2d a = conv_attr(n);
  a.algorithm = algorithm;
  std::vector<unsigned char> bytes = n.attrs;
  std::memcpy(bytes.data(), &a, sizeof a);
  return bytes;
}

bool backend_runs(const Node& n, const std::vector<unsigned char>& attrs) {
  std::vector<ingot_tensor_desc> in, out;
  for (const TensorRef& r : n.inputs) in.push_back(r.desc);
  for (const TensorRef& r : n.outputs) out.push_back(r.desc);
  return n.backend->supports(n.op, in.data(), static_cast<int>(in.size()), out.data(), static_cast<int>(out.size()),
                             attrs.data());
}

/// Median seconds of the node with attributes `a` and with `b`, run in turns (5 each, after one
/// untimed run each: plans made, memory touched) on zeroed scratch blocks the size of its values.
std::pair<double, double> median_seconds(const Graph& g, const Node& n, const std::vector<unsigned char>& a,
                                         const std::vector<unsigned char>& b) {
  std::map<int, Tensor> scratch;
  auto descs = [&](const std::vector<TensorRef>& refs) {
    std::vector<ingot_tensor_desc> d;
    for (const TensorRef& r : refs) {
      d.push_back(r.desc);
      if (!r.defined()) continue;
      auto [it, fresh] = scratch.try_emplace(r.value);
      if (fresh) {
        it->second = Tensor::empty({static_cast<int64_t>(g.values[r.value].nbytes)}, DType::U8);
        std::memset(it->second.storage()->data(), 0, g.values[r.value].nbytes);
      }
      d.back().data = it->second.storage()->data();
    }
    return d;
  };
  const std::vector<ingot_tensor_desc> in = descs(n.inputs), out = descs(n.outputs);
  auto seconds = [&](const std::vector<unsigned char>& attrs) {
    const auto t0 = std::chrono::steady_clock::now();
    run_descs_on(*n.backend, n.op, in, out, attrs.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  seconds(a);
  seconds(b);
  std::vector<double> ta, tb;
  for (int i = 0; i < 5; ++i) {
    ta.push_back(seconds(a));
    tb.push_back(seconds(b));
  }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  return {ta[2], tb[2]};
}

}  // namespace

bool allows_winograd(const Node& node) {
  return is_conv(node) && conv_attr(node).algorithm == INGOT_CONV_ALGO_WINOGRAD;
}

int choose_conv_algorithms(Graph& g, ConvChoice choice) {
  int chosen = 0;
  for (Node& n : g.nodes) {
    if (!candidate(n)) continue;
    std::vector<unsigned char> winograd = with_algorithm(n, INGOT_CONV_ALGO_WINOGRAD);
    if (!backend_runs(n, winograd)) continue;
    if (choice == ConvChoice::Measure) {
      const auto [t_winograd, t_direct] = median_seconds(g, n, winograd, with_algorithm(n, INGOT_CONV_ALGO_DIRECT));
      if (t_winograd > 0.9 * t_direct) continue;
    }
    n.attrs = std::move(winograd);
    ++chosen;
  }
  return chosen;
}

}  // namespace ingot::graph
