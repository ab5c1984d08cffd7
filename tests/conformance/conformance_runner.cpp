// Runs a conformance case on one backend, directly (run_op_on) or through dispatch (run_op with
// only that backend enabled, so opaque output layouts and their reorders are exercised too).
#include "conformance_runner.h"

#include <algorithm>
#include <cmath>

#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot::conformance {

namespace {

bool contains(const std::vector<int>& v, int i) { return std::find(v.begin(), v.end(), i) != v.end(); }

Device device_of(const Backend& b) { return Device{b.device_kind(), 0}; }

// The backend's copy of the inputs: mutated ones cloned, everything on the backend's device.
std::vector<Tensor> inputs_for(const Backend& b, const OpCase& c) {
  std::vector<Tensor> in;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    Tensor t = contains(c.mutated_inputs, static_cast<int>(i)) ? c.inputs[i].clone() : c.inputs[i];
    in.push_back(t.to(device_of(b)));
  }
  return in;
}

std::vector<Tensor> empty_outputs(const std::vector<OutputSpec>& specs, Device device) {
  std::vector<Tensor> out;
  for (const OutputSpec& s : specs) out.push_back(Tensor::empty(s.shape, s.dtype, device));
  return out;
}

std::vector<ingot_tensor_desc> descs(const std::vector<Tensor>& ts) {
  std::vector<ingot_tensor_desc> d;
  for (const Tensor& t : ts) d.push_back(make_desc(t));
  return d;
}

bool supports(const Backend& b, OpKind op, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
              const void* attrs) {
  const auto di = descs(in), dout = descs(out);
  return b.supports(op, di.data(), static_cast<int>(di.size()), dout.data(), static_cast<int>(dout.size()), attrs);
}

const Backend& reference() { return BackendRegistry::instance().reference(); }

// MAX_POOL2D_BWD: (grad_y, x) plus the workspace of a forward on `b` (the reference's when b
// does not run the forward), which is what autograd would keep.
std::vector<Tensor> with_workspace(const Backend& b, const OpCase& c, const std::vector<Tensor>& in) {
  const std::vector<OutputSpec> fwd_specs = {{c.inputs[0].shape(), c.inputs[0].dtype()},
                                             {c.inputs[0].shape(), DType::I64}};
  const std::vector<Tensor> x = {in[1]};
  std::vector<Tensor> fwd = empty_outputs(fwd_specs, device_of(b));
  const Backend& runner = supports(b, INGOT_OP_MAX_POOL2D, x, fwd, c.attrs()) ? b : reference();
  run_op_on(runner, INGOT_OP_MAX_POOL2D, x, fwd, c.attrs());
  return {in[0], in[1], fwd[1]};
}

Outcome collect(const OpCase& c, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                const std::string& backend) {
  Outcome o;
  o.backend = backend;
  for (size_t i = 0; i < out.size(); ++i) {
    if (c.compared_outputs.empty() || contains(c.compared_outputs, static_cast<int>(i))) {
      o.outputs.push_back(out[i].strided().to(Device::cpu()));
    }
  }
  for (int i : c.mutated_inputs) o.mutated.push_back(in[static_cast<size_t>(i)].strided().to(Device::cpu()));
  return o;
}

}  // namespace

Tolerance tolerance_for(const OpCase& c, DType dtype) {
  const double depth = std::sqrt(static_cast<double>(std::max<int64_t>(c.reduction, 1)));
  double base = 0.0;
  switch (dtype) {
    case DType::F64:
      base = 1e-12;
      break;
    case DType::F32:
      base = 1e-5;
      break;
    case DType::F16:
      base = 1e-3;
      break;
    case DType::BF16:
      if (c.tolerance) break;
      // Backend and reference each round a result computed in f32 or wider to bf16 once, so they
      // may differ by one bf16 ulp, at most 2^-7 of the value: rtol is two ulps (room for one more
      // rounding inside the op, such as an f32 exp that lands on the other side of a tie). The
      // accumulation depth enters only through atol, for results that cancel to near 0: there an
      // f32 sum of K terms of magnitude ~1 is off by ~sqrt(K) * 2^-24; atol = sqrt(K) * 2^-14 leaves
      // a wide margin yet fails a sum accumulated in bf16 (~sqrt(K) * 2^-9).
      return {2.0 * kBf16Ulp / 256.0 * depth, 2.0 * kBf16Ulp};
    default:  // integers, bool: exact, unless the case allows an absolute difference (requantized outputs)
      return c.tolerance ? Tolerance{*c.tolerance, 0.0} : Tolerance{};
  }
  if (c.tolerance) base = *c.tolerance;
  const double scaled = base * depth;
  return {scaled, scaled};
}

DType case_dtype(const OpCase& c) {
  if (c.inputs.empty()) return c.outputs.at(0).dtype;
  // after WHERE's condition and the CAPTURABLE updates' hyper-parameters
  const bool second =
      c.op == INGOT_OP_WHERE || c.op == INGOT_OP_SGD_UPDATE_CAPTURABLE || c.op == INGOT_OP_ADAM_UPDATE_CAPTURABLE;
  return c.inputs[second ? 1 : 0].dtype();
}

std::map<std::string, BackendStats>& stats() {
  static std::map<std::string, BackendStats> s;
  return s;
}

const std::vector<const Backend*>& backends_under_test() {
  static const std::vector<const Backend*> under_test = [] {
    PluginLoader::instance().load_all();
    std::vector<const Backend*> v;
    const BackendRegistry& reg = BackendRegistry::instance();
    for (const auto& b : reg.backends()) {
      if (b.get() != &reg.reference()) v.push_back(b.get());
    }
    return v;
  }();
  return under_test;
}

std::vector<std::string> rejected_plugins() {
  std::vector<std::string> out;
  for (const PluginRecord& r : PluginLoader::instance().records()) {
    if (!r.available) out.push_back(r.name + ": " + r.reason);
  }
  return out;
}

bool claims(const Backend& b, const OpCase& c) {
  std::vector<Tensor> in = inputs_for(b, c);
  if (c.pool_workspace) in = with_workspace(b, c, in);
  return supports(b, c.op, in, empty_outputs(c.outputs, device_of(b)), c.attrs());
}

Outcome run_direct(const Backend& b, const OpCase& c) {
  std::vector<Tensor> in = inputs_for(b, c);
  if (c.pool_workspace) in = with_workspace(b, c, in);
  const std::vector<Tensor> out = empty_outputs(c.outputs, device_of(b));
  run_op_on(b, c.op, in, out, c.attrs());
  return collect(c, in, out, b.name());
}

Outcome run_dispatch(const Backend& b, const OpCase& c) {
  const DispatchOnly only(b.name());
  std::vector<Tensor> in = inputs_for(b, c);
  if (c.pool_workspace) {
    const std::vector<OutputSpec> fwd_specs = {{c.inputs[0].shape(), c.inputs[0].dtype()},
                                               {c.inputs[0].shape(), DType::I64}};
    const std::vector<Tensor> fwd = run_op(INGOT_OP_MAX_POOL2D, {in[1]}, fwd_specs, c.attrs(), device_of(b));
    in = {in[0], in[1], fwd[1]};
  }
  const std::string picked = select_backend(c.op, in, c.outputs, c.attrs(), device_of(b)).name();
  const std::vector<Tensor> out = run_op(c.op, in, c.outputs, c.attrs(), device_of(b));
  return collect(c, in, out, picked);
}

DispatchOnly::DispatchOnly(const std::string& name) { BackendRegistry::instance().restrict_to({name}); }
DispatchOnly::~DispatchOnly() { BackendRegistry::instance().restrict_to({}); }

std::string compare_outcomes(const OpCase& c, const Outcome& actual, const Outcome& expected) {
  auto check = [&](const std::vector<Tensor>& a, const std::vector<Tensor>& e, const char* what) -> std::string {
    for (size_t i = 0; i < e.size() && i < a.size(); ++i) {
      const Tolerance tol = tolerance_for(c, e[i].dtype());
      if (a[i].dtype() != e[i].dtype()) {
        return fmt::format("{} {}: dtype {} vs expected {}", what, i, dtype_name(a[i].dtype()),
                           dtype_name(e[i].dtype()));
      }
      const std::string msg = test::compare(a[i], e[i], tol.atol, tol.rtol);
      if (!msg.empty()) return fmt::format("{} {}: {}", what, i, msg);
    }
    return a.size() == e.size() ? "" : fmt::format("{} {} {}s vs {} expected", a.size(), what, what, e.size());
  };
  std::string msg = check(actual.outputs, expected.outputs, "output");
  if (msg.empty()) msg = check(actual.mutated, expected.mutated, "mutated input");
  return msg;
}

}  // namespace ingot::conformance
