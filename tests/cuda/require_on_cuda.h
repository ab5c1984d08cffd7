// For the GPU tests: every op since the last reset_op_counts() ran on the cuda backend. An op the
// backend declines would run on the host through dispatch's fallback and prove nothing.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>

#include "ingot/runtime/op_counts.h"

namespace ingot::test {

inline void require_all_on_cuda() {
  int64_t cuda_ops = 0;
  for (const auto& [backend, n] : ops_by_backend()) {
    if (n == 0) continue;
    INFO(backend << " ran " << n << " ops");
    CHECK(backend == "cuda");
    if (backend == "cuda") cuda_ops += n;
  }
  REQUIRE(cuda_ops > 0);
}

}  // namespace ingot::test
