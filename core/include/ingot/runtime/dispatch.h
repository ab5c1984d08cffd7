// Dispatch: runs one op of the op table on tensors — picks the backend, lets it choose output
// layouts, allocates outputs, reorders opaque inputs another backend cannot read, executes.
#pragma once

#include <initializer_list>
#include <vector>

#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

class Backend;

/// Shape and dtype of an output that dispatch allocates.
struct OutputSpec {
  Shape shape;
  DType dtype = DType::F32;
};

/// Runs `op` and returns its freshly allocated outputs. `device` places ops with no inputs.
std::vector<Tensor> run_op(OpKind op, const std::vector<Tensor>& inputs,
                           const std::vector<OutputSpec>& outputs, const void* attrs = nullptr,
                           Device device = Device::cpu());
/// Runs `op` writing into existing strided outputs (in-place updates, copies into views).
void run_op_into(OpKind op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                 const void* attrs = nullptr);
/// Runs `op` on one given backend, bypassing selection (conformance tests, benchmarks).
void run_op_on(const Backend& backend, OpKind op, const std::vector<Tensor>& inputs,
               const std::vector<Tensor>& outputs, const void* attrs = nullptr);
/// Executes `op` on `backend` on prepared descriptors (a graph's replay): supplies the workspace
/// and counts the op like every backend call; no chain, no recorder.
void run_descs_on(const Backend& backend, OpKind op, const std::vector<ingot_tensor_desc>& in,
                  const std::vector<ingot_tensor_desc>& out, const void* attrs);
/// The backend that run_op would pick for these inputs and output specs.
const Backend& select_backend(OpKind op, const std::vector<Tensor>& inputs,
                              const std::vector<OutputSpec>& outputs, const void* attrs = nullptr,
                              Device device = Device::cpu());

/// ABI descriptor of a tensor (layout and data pointer included).
ingot_tensor_desc make_desc(const Tensor& t);
/// Execution context for the calling thread (thread budget, workspace from core's allocator).
const ingot_exec_context& exec_context();

}  // namespace ingot
