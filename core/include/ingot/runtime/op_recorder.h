// OpRecorder: sees every backend call of its thread exactly as it executes — the backend dispatch
// picked, the op, its tensors (after any reorder dispatch inserted) and their descriptors — plus
// each reorder of a backend's own layout to strided. Graph capture (graph/capture.h) installs one
// for a step. It sits below the dispatch chain because in-place ops (run_op_into) and reorders
// never pass through the chain.
#pragma once

#include <memory>
#include <vector>

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

class Backend;

/// One backend call as executed. `inputs` / `outputs` are the tensors whose descriptors `in` /
/// `out` are (same order); an input may be undefined (an absent optional input).
struct RecordedCall {
  const Backend& backend;
  OpKind op;
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  const std::vector<ingot_tensor_desc>& in;
  const std::vector<ingot_tensor_desc>& out;
  const void* attrs;
  bool in_place;  ///< run_op_into: the outputs existed before the call
};

class OpRecorder {
 public:
  virtual ~OpRecorder() = default;
  /// After the backend ran `call`.
  virtual void record(const RecordedCall& call) = 0;
  /// After `owner` reordered `src` (storage and layout as they were) into the strided `dst`.
  virtual void record_reorder(const Backend& owner, const std::shared_ptr<Storage>& src_storage,
                              const std::shared_ptr<OpaqueLayout>& src_layout, const ingot_tensor_desc& src,
                              const Tensor& dst) = 0;
  /// Something ran that a recording cannot replay (an op run on the host for a device, a copy
  /// between devices): `what` says which.
  virtual void unrecordable(const char* what) = 0;
  /// After the contiguous host tensor `src` was copied into the fresh `dst` on a device (a scalar
  /// the step's host code made, on its way to the device). A recording that cannot keep it as a
  /// constant of the device says the copy is unrecordable.
  virtual void record_upload(const Tensor& src, const Tensor& dst) {
    (void)src, (void)dst;
    unrecordable("a copy between devices");
  }
};

/// Installs `recorder` for this thread (null: none); returns the one it replaces.
OpRecorder* set_op_recorder(OpRecorder* recorder);
/// The recorder of this thread, or null.
OpRecorder* op_recorder();
/// True while a recorder is installed: a module whose control flow depends on tensor values (a
/// padding check, say) takes the path that is valid for every value, since a replay will not
/// run its code.
inline bool is_recording() { return op_recorder() != nullptr; }

}  // namespace ingot
