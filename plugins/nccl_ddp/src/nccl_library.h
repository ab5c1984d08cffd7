// NcclLibrary: NCCL opened at run time (dlopen) rather than linked, so that the plugin loads on
// every machine and its probe can say why NCCL is missing; holds the entry points the communicator
// calls, resolved once per process.
#pragma once

#include <nccl.h>

#include <string>

namespace ingot::nccl {

/// NCCL 2.14 brought non-blocking communicators (ncclCommInitRankConfig with blocking = 0,
/// ncclCommFinalize); every other entry used here (ncclAvg, bf16, send / recv) is older.
inline constexpr int kMinVersion = 21400;

/// "2.28.9" for NCCL's version code (22809; 2.8 and older encode major * 1000 + minor * 100 + patch).
std::string version_string(int code);

// Each entry is a member named like NCCL's function, with its type from nccl.h.
#define INGOT_NCCL_ENTRIES(X) \
  X(ncclGetVersion)           \
  X(ncclGetUniqueId)          \
  X(ncclCommInitRankConfig)   \
  X(ncclCommFinalize)         \
  X(ncclCommDestroy)          \
  X(ncclCommAbort)            \
  X(ncclCommGetAsyncError)    \
  X(ncclGetErrorString)       \
  X(ncclGetLastError)         \
  X(ncclAllReduce)            \
  X(ncclBroadcast)            \
  X(ncclAllGather)            \
  X(ncclReduceScatter)        \
  X(ncclSend)                 \
  X(ncclRecv)

struct NcclLibrary {
  std::string path;  ///< the file the dynamic loader opened, e.g. /usr/local/cuda/lib/libnccl.so.2
  int version = 0;   ///< ncclGetVersion's code, e.g. 22809
#define INGOT_NCCL_MEMBER(fn) decltype(&::fn) fn = nullptr;
  INGOT_NCCL_ENTRIES(INGOT_NCCL_MEMBER)
#undef INGOT_NCCL_MEMBER

  /// Opens `file` (a path, or a file name the dynamic loader searches for) and resolves every
  /// entry; throws sdk::Failure (INGOT_ERR_UNSUPPORTED) naming the file and what went wrong: not
  /// loadable, an entry missing, or a version below kMinVersion. The library stays open for the
  /// process once accepted.
  static NcclLibrary open(const std::string& file);

  /// The process's NCCL, opened on the first call: $INGOT_NCCL_LIBRARY when set (that file only),
  /// else libnccl.so.2 through the loader's search (LD_LIBRARY_PATH, ld.so.cache), else the
  /// library found when the plugin was built. A failure is kept and thrown again on every call,
  /// its message naming each file tried and what to do.
  static const NcclLibrary& instance();
};

}  // namespace ingot::nccl
