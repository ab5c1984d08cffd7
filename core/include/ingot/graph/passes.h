// Graph passes. Each is switchable (CompileOptions) and tested alone; none reorders floating-point
// arithmetic, so a replay gives the bits the captured step gave.
#pragma once

#include <cstddef>
#include <string>

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// Removes nodes whose outputs nothing reads: not a later node, not the step's results or
/// gradients, not state (a node that writes state or an input stays, and so does one without outputs,
/// which runs for what it writes into its inputs: an optimizer update). Returns how many went.
int eliminate_dead_code(Graph& graph);

/// Runs once, now, every node whose inputs are all constants (or that has none: a fill) and
/// whose outputs no node writes and nothing outside the step keeps; their outputs become
/// constants. Random nodes never fold. Host values only. Returns how many folded.
int fold_constants(Graph& graph);

/// The memory plan of the values nodes make and the step drops.
struct MemoryPlan {
  size_t arena_bytes = 0;        ///< one block holding all of them, reused by liveness
  size_t unplanned_bytes = 0;    ///< the same values without reuse (each its own block)
  size_t peak_live_bytes = 0;    ///< the most of them alive at once (the plan's lower bound)
  size_t escaping_bytes = 0;     ///< what the step leaves behind (loss, gradients): fresh each step
};

/// Gives each internal, non-escaping value an offset in one arena: a value lives from the node
/// that makes it to the last node that uses it, and values whose lives overlap never share bytes
/// (64-byte aligned). Two plans are made: in node order, each value in the smallest free block it
/// fits, the most recently freed first (what a caching allocator would do: the block is still in
/// cache), and largest first at the lowest free offset (the tightest packing); the first is kept
/// unless it needs over 5% more. A value that shares another's block (Value::shares, set by
/// share_in_place) is planned with it as one block living from the first's making to the last's
/// use. `reuse` false: each value its own place (the pass switched off; sharing ignored).
MemoryPlan plan_memory(Graph& graph, bool reuse = true);

/// "1.5 MiB".
std::string format_bytes(size_t bytes);

}  // namespace ingot::graph
