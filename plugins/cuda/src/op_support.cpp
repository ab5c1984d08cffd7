// Checks shared by every family's supports(): device, layout and rank of the descriptors; the
// launch check that turns a failed <<<>>> into an exception; op names for messages.
#include <string>

#include "cuda_check.h"
#include "kernels.h"

namespace ingot::cuda {

bool is_device_strided(const ingot_tensor_desc& d) {
  return d.device_kind == INGOT_DEVICE_CUDA && d.layout == INGOT_LAYOUT_STRIDED && d.ndim >= 0 &&
         d.ndim <= INGOT_MAX_DIMS && d.dtype >= 0 && d.dtype < INGOT_DTYPE_COUNT;
}

bool all_device_strided(const sdk::OpCall& c) {
  for (int i = 0; i < c.n_in; ++i)
    if (!is_device_strided(c.in[i])) return false;
  for (int i = 0; i < c.n_out; ++i)
    if (!is_device_strided(c.out[i])) return false;
  return true;
}

const char* op_name(int32_t op) {
  static const char* const names[] = {
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) name,
#include "ingot/plugin/op_table.def"
#undef INGOT_OP
  };
  return op >= 0 && op < INGOT_OP_COUNT ? names[op] : "unknown op";
}

void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw sdk::Failure(INGOT_ERR_RUNTIME, std::string("cuda: launching ") + kernel + " failed: " + cudaGetErrorName(e) +
                                              ": " + cudaGetErrorString(e));
}

}  // namespace ingot::cuda
