// A captured step as a graph: the backend calls one run of a step executed, in order, over values
// (blocks of memory) that are the step's inputs, the state it reads and writes in place, the
// constants its host code made, and what its nodes produce. Passes rewrite it; an Executable
// replays it (docs/compile.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/ops/random.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot {
class Backend;
}

namespace ingot::graph {

enum class ValueKind {
  Input,     ///< bound at each replay: the batch, gradients that exist before the step
  State,     ///< outlives the step (parameters, buffers, a loss scale): read and written live
  Constant,  ///< made by the step's host code without an op (a scalar): the graph keeps a copy
             ///< (on the device when the host code copied it there)
  Internal,  ///< made by a node
};

const char* kind_name(ValueKind kind);

/// One block of memory.
struct Value {
  ValueKind kind = ValueKind::Internal;
  size_t nbytes = 0;
  Device device = Device::cpu();
  /// State: the live storage; Constant: the graph's copy; Internal: null until a pass folds it
  /// into a constant (then it is the folded result).
  std::shared_ptr<Storage> storage;
  int input_index = -1;  ///< Input: which bound tensor
  /// Internal: outlives the step (the loss, a gradient, anything still referenced after it):
  /// fresh memory at each replay, never the arena.
  bool escapes = false;
  bool written = false;         ///< some node writes it in place
  int64_t arena_offset = -1;    ///< Internal, not escaping: its place in the arena (plan_memory)
  /// Internal: made over this value's block by the node that reads it last (share_in_place);
  /// plan_memory gives both one block. -1: a block of its own.
  int shares = -1;
  /// A constant of a device (a host scalar the step copied there): its bytes as the host made
  /// them, which two captures compare; `storage` is the device's copy, made once.
  std::vector<unsigned char> upload;
};

/// A tensor as a node sees it: a view (shape, strides, offset, dtype, layout) of a value.
struct TensorRef {
  int value = -1;  ///< -1: an absent optional input
  ingot_tensor_desc desc{};  ///< data is null; layout_handle lives as long as `layout`
  std::shared_ptr<OpaqueLayout> layout;
  bool defined() const { return value >= 0; }
};

/// Where a random node's (seed, offset) came from: a draw of `gen` at `rel` past the offset the
/// generator had when the step began.
struct RngUse {
  Generator* gen = nullptr;
  uint64_t rel = 0;
  size_t seed_at = 0;  ///< byte offset of the (seed, offset) pair in the attributes
};

/// One backend call (or a reorder of a backend's layout to strided).
struct Node {
  OpKind op{};
  const Backend* backend = nullptr;
  bool reorder = false;   ///< backend->to_strided(inputs[0]) into outputs[0]; `op` is unused
  bool in_place = false;  ///< the outputs existed before the call (run_op_into)
  std::vector<TensorRef> inputs, outputs;
  std::vector<unsigned char> attrs;  ///< a copy of the attribute struct; empty = none
  std::optional<RngUse> rng;
  std::string name() const;
};

/// A generator the step drew from: its offset when the step began and when it ended.
struct RngStream {
  Generator* gen = nullptr;
  uint64_t start = 0, end = 0;
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;
  /// What the step returned (the loss).
  std::vector<TensorRef> results;
  /// (parameter index, its gradient after the step).
  std::vector<std::pair<size_t, TensorRef>> grads;
  std::vector<RngStream> rng;
};

/// True when `a` and `b` are the same computation: nodes, attributes (random offsets excluded),
/// values and constants' bytes. Otherwise `why` names the first difference.
bool same_graph(const Graph& a, const Graph& b, std::string* why);

/// "f32[128, 10]" (plus " opaque" for a backend's layout).
std::string describe(const ingot_tensor_desc& d);

}  // namespace ingot::graph
