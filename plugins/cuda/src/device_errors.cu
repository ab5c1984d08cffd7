// DeviceErrors: the per-device error record, its pinned mirror, and the messages it raises.
#include <cstring>

#include "device_errors.h"
#include "kernels.h"

namespace ingot::cuda {
namespace {

void expect_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();
  throw sdk::Failure(INGOT_ERR_RUNTIME,
                     std::string("cuda: ") + what + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace

std::string device_error_message(const DeviceErrorRecord& rec, int device, bool at_op) {
  const std::string where = "cuda:" + std::to_string(device);
  const std::string when = at_op ? " (found right after the op, INGOT_CUDA_SYNC=1)"
                                 : " (found at the first synchronization after the op; set INGOT_CUDA_SYNC=1 to "
                                   "raise it at the op itself)";
  if (rec.code != kIndexOutOfRange)
    return where + ": a kernel reported device error " + std::to_string(rec.code) + " in " + op_name(rec.op) + when;
  const std::string range =
      rec.bound > 0 ? "valid indices are 0 to " + std::to_string(rec.bound - 1) : "it has no valid index";
  return std::string(op_name(rec.op)) + ": index " + std::to_string(rec.index) + " is out of range for a dim of size " +
         std::to_string(rec.bound) + " on " + where + " (" + range + "; negative indices are not wrapped)" + when;
}

bool sync_after_each_op(const char* v) {
  if (v == nullptr || v[0] == '\0') return false;
  for (const char* off : {"0", "false", "off", "no", "FALSE", "OFF", "NO", "False", "Off", "No"})
    if (std::strcmp(v, off) == 0) return false;
  return true;
}

DeviceErrors::DeviceErrors(int device) : device_index_(device) {
  expect_ok(cudaSetDevice(device), "cudaSetDevice for the error record");
  expect_ok(cudaMalloc(reinterpret_cast<void**>(&device_), sizeof(DeviceErrorRecord)),
            "cudaMalloc of the error record");
  void* mirror = nullptr;
  try {
    expect_ok(cudaMemset(device_, 0, sizeof(DeviceErrorRecord)), "cudaMemset of the error record");
    expect_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after zeroing the error record");
    expect_ok(cudaHostAlloc(&mirror, sizeof(uint32_t), cudaHostAllocPortable), "cudaHostAlloc of the error mirror");
  } catch (...) {
    (void)cudaFree(device_);
    throw;
  }
  mirror_ = static_cast<volatile uint32_t*>(mirror);
  *mirror_ = kNoDeviceError;
}

// Best effort: the backend lives until the process exits, when the driver may be gone already.
DeviceErrors::~DeviceErrors() {
  (void)cudaFree(device_);
  (void)cudaFreeHost(const_cast<uint32_t*>(mirror_));
  (void)cudaGetLastError();
}

void DeviceErrors::watch(cudaStream_t stream) {
  expect_ok(
      cudaMemcpyAsync(const_cast<uint32_t*>(mirror_), &device_->code, sizeof(uint32_t), cudaMemcpyDeviceToHost, stream),
      "copying the error record to the host");
}

void DeviceErrors::check(bool at_op) {
  if (*mirror_ == kNoDeviceError) return;
  // Rare: wait for every stream of the device so that the record is complete and no refresh of
  // the mirror is in flight, then read and clear both.
  expect_ok(cudaSetDevice(device_index_), "cudaSetDevice");
  expect_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize before reading the error record");
  DeviceErrorRecord rec{};
  expect_ok(cudaMemcpy(&rec, device_, sizeof(rec), cudaMemcpyDeviceToHost), "reading the error record");
  // cudaMemset does not wait for itself, and the next kernel may run on a non-blocking stream.
  expect_ok(cudaMemset(device_, 0, sizeof(rec)), "clearing the error record");
  expect_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after clearing the error record");
  *mirror_ = kNoDeviceError;
  if (rec.code != kNoDeviceError)
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, device_error_message(rec, device_index_, at_op));
}

}  // namespace ingot::cuda
