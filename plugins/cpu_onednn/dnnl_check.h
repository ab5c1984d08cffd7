// DNNL_CHECK for the oneDNN C++ API: turns a thrown dnnl::error into sdk::Failure carrying
// "what failed; dnnl status N (message)" so that core reports it with the backend and op name.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>

#include "ingot/plugin/sdk.h"

namespace ingot::onednn {

/// Maps a oneDNN status to the closest Ingot status code.
inline int32_t status_code(dnnl_status_t s) {
  switch (s) {
    case dnnl_out_of_memory:
      return INGOT_ERR_OUT_OF_MEMORY;
    case dnnl_invalid_arguments:
      return INGOT_ERR_INVALID_ARGUMENT;
    case dnnl_unimplemented:
      return INGOT_ERR_UNSUPPORTED;
    default:
      return INGOT_ERR_RUNTIME;
  }
}

/// The Failure for a dnnl::error: "<what>; dnnl status <n> (<message>)".
inline sdk::Failure dnnl_failure(const dnnl::error& e, const std::string& what) {
  return sdk::Failure(status_code(e.status),
                      what + "; dnnl status " + std::to_string(static_cast<int>(e.status)) + " (" + e.what() + ")");
}

}  // namespace ingot::onednn

/// DNNL_CHECK(statement, what): runs a oneDNN C++ API statement; `what` (any expression
/// convertible to std::string) is only evaluated when it fails.
#define DNNL_CHECK(statement, what)                             \
  do {                                                          \
    try {                                                       \
      statement;                                                \
    } catch (const dnnl::error& dnnl_error_) {                  \
      throw ::ingot::onednn::dnnl_failure(dnnl_error_, (what)); \
    }                                                           \
  } while (0)
