// The dispatch chain: interceptors that see every op run_op dispatches, in a fixed order, before
// it reaches a backend (profiler, autocast, observers, autograd recording, graph capture). The
// dispatcher knows none of them by name; each layer installs its own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

struct OutputSpec;

/// One op on its way to a backend. Interceptors that change the call (autocast casts inputs and
/// output dtypes) build a new OpCall over vectors of their own and pass that on.
struct OpCall {
  OpKind op;
  const std::vector<Tensor>* inputs;
  const std::vector<OutputSpec>* outputs;
  const void* attrs;
  Device device;  ///< where an op without inputs runs
};

/// Where an interceptor sits: lower values run first (outermost), the backend last.
enum class InterceptorOrder : int {
  Profiler = 100,  ///< times the whole op, interceptors below included
  Autocast = 200,  ///< casts inputs before anything below sees them
  Observer = 300,  ///< looks at inputs and outputs (quantization calibration)
  Autograd = 400,  ///< records the op as the backend will run it
  Capture = 500,   ///< graph capture: the ops exactly as executed
};

class DispatchNext;

/// Base of every interceptor.
class OpInterceptor {
 public:
  virtual ~OpInterceptor() = default;
  virtual const char* name() const = 0;
  /// Runs `call`: normally `next(call)` once, with work before and after it; an interceptor that
  /// replaces the op returns outputs of the specs in `call.outputs` without calling next.
  virtual std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) = 0;
};

struct DispatchChainState;

/// The rest of the chain below one interceptor.
class DispatchNext {
 public:
  DispatchNext(const DispatchChainState* chain, size_t index) : chain_(chain), index_(index) {}
  std::vector<Tensor> operator()(const OpCall& call) const;

 private:
  const DispatchChainState* chain_;
  size_t index_;
};

/// The process's interceptors. Adding or removing one is rare (start-up, profiler start/stop)
/// and takes a lock; running the chain takes none.
namespace dispatch_chain {
/// Installs `interceptor` at `order` (after others of the same order); the chain keeps it alive.
void add(std::shared_ptr<OpInterceptor> interceptor, InterceptorOrder order);
/// Removes it; a no-op when absent.
void remove(const OpInterceptor* interceptor);
/// Names of the installed interceptors, outermost first.
std::vector<std::string> names();
/// Runs `call` through the whole chain and the backend.
std::vector<Tensor> run(const OpCall& call);
}  // namespace dispatch_chain

}  // namespace ingot
