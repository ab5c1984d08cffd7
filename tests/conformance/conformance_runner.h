// Runs conformance cases on a backend under test and on the reference backend, and compares them
// with |a - b| <= atol + rtol * |b|, tolerances per dtype scaled by the reduction length.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ingot/runtime/backend.h"
#include "op_case.h"

namespace ingot::conformance {

/// What a case produced: its compared outputs and its mutated inputs, as strided host tensors.
struct Outcome {
  std::vector<Tensor> outputs;
  std::vector<Tensor> mutated;
  std::string backend;  ///< who ran the op (through dispatch: the one selection picked)
};

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};
/// One bf16 ulp relative to the value: 2^-7 (8 significant bits).
inline constexpr double kBf16Ulp = 1.0 / 128.0;
/// f64 1e-12, f32 1e-5, f16 1e-3, times sqrt(reduction) for both atol and rtol; integers and bool
/// exact. bf16: rtol = 2 ulps (2^-6) whatever the depth, atol = sqrt(reduction) * 2^-14 (the
/// reasoning is in tolerance_for). A case's `tolerance` replaces the base (bf16 too); for integer
/// outputs it is the absolute difference allowed, not scaled.
Tolerance tolerance_for(const OpCase& c, DType dtype);

/// Counters printed as one summary line per backend.
struct BackendStats {
  std::map<OpKind, std::set<DType>> claimed;  ///< op -> dtypes of the claimed cases
  int64_t cases_run = 0;                      ///< claimed cases, each run directly and through dispatch
  int64_t failures = 0;
  int64_t dispatched_elsewhere = 0;  ///< claimed cases that dispatch gave another backend
};
std::map<std::string, BackendStats>& stats();

/// The dtype a case is "for": its first data input's (WHERE: input 1), else its first output's.
DType case_dtype(const OpCase& c);

/// Loads the plugins once and returns every backend except the reference.
const std::vector<const Backend*>& backends_under_test();
/// "name: reason" for each plugin the loader rejected.
std::vector<std::string> rejected_plugins();

/// Whether `b` claims the case (asked with the real descriptors; MAX_POOL2D_BWD is asked with
/// the workspace of b's own forward, or of the reference's when b has no forward).
bool claims(const Backend& b, const OpCase& c);
/// Runs the case on `b` with run_op_on (the reference when b is the reference); throws on error.
Outcome run_direct(const Backend& b, const OpCase& c);
/// Runs the case through run_op with only `b` (and the reference) enabled.
Outcome run_dispatch(const Backend& b, const OpCase& c);
/// While alive, dispatch sees only backend `name` and the reference (the last resort).
class DispatchOnly {
 public:
  explicit DispatchOnly(const std::string& name);
  ~DispatchOnly();
  DispatchOnly(const DispatchOnly&) = delete;
  DispatchOnly& operator=(const DispatchOnly&) = delete;
};

/// "" when every compared tensor is close, else what differs and where.
std::string compare_outcomes(const OpCase& c, const Outcome& actual, const Outcome& expected);

}  // namespace ingot::conformance
