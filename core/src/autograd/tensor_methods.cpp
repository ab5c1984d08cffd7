// The Tensor methods that run ops and record autograd: views (recorded as view nodes), copies,
// casts, moves between devices, in-place copy and fill, item().
#include <numeric>

#include "autograd/record.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "ingot/runtime/op_recorder.h"
#include "ingot/runtime/registry.h"
#include "ingot/tensor/tensor.h"
#include "tensor/element.h"

namespace ingot {

namespace {
/// In-place writes are not recorded: refuse them on tensors the graph may depend on.
void check_inplace(const Tensor& t, const char* what) {
  INGOT_CHECK(!GradMode::is_enabled() || !t.requires_grad(),
              "{}: in-place write into a tensor that requires grad while grad mode is on (autograd does not record "
              "in-place ops): wrap it in NoGradGuard, or write into a detach()ed tensor",
              what);
}
}  // namespace

namespace {

/// Replaces one -1 by the size that keeps numel; checks the element count.
Shape infer_shape(const Shape& shape, int64_t numel) {
  Shape out = shape;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      INGOT_CHECK_SHAPE(infer < 0, "reshape {}: only one dim can be -1", shape.str());
      infer = i;
    } else {
      INGOT_CHECK_SHAPE(out[i] >= 0, "reshape {}: invalid dim {}", shape.str(), out[i]);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    INGOT_CHECK_SHAPE(known != 0 && numel % known == 0, "cannot reshape {} elements into {}", numel, shape.str());
    out[infer] = numel / known;
  }
  INGOT_CHECK_SHAPE(out.numel() == numel, "cannot reshape {} elements into {}", numel, shape.str());
  return out;
}

/// torch's computeStride: strides for viewing (shape, strides) as new_shape, if possible.
bool view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape, Shape& out) {
  out.resize(new_shape.size());
  if (shape.numel() == 0 || shape.size() == 0) {  // empty, or a 0-dim scalar: any strides work
    out = contiguous_strides(new_shape);
    return true;
  }
  int view_d = new_shape.size() - 1;
  int64_t chunk_base_stride = shape.size() ? strides.back() : 1;
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = shape.size() - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  const Shape target = infer_shape(shape, numel());
  const Tensor base = strided();
  Shape st;
  INGOT_CHECK_SHAPE(view_strides(base.shape(), base.strides(), target, st),
                    "view {} of a tensor of shape {} with strides {} is impossible: use reshape", target.str(),
                    base.shape().str(), base.strides().str());
  return autograd::record_view(*this, make_view(target, st, base.offset()), "ViewBackward",
                               [in = this->shape()](const Tensor& g) { return g.reshape(in); });
}

Tensor Tensor::reshape(const Shape& shape) const {
  const Shape target = infer_shape(shape, numel());
  const Tensor base = strided();
  Shape st;
  if (view_strides(base.shape(), base.strides(), target, st))
    return autograd::record_view(*this, make_view(target, st, base.offset()), "ReshapeBackward",
                                 [in = this->shape()](const Tensor& g) { return g.reshape(in); });
  return base.contiguous().view(target);
}

Tensor Tensor::permute(const std::vector<int>& order) const {
  INGOT_CHECK_SHAPE(static_cast<int>(order.size()) == dim(), "permute: {} axes for a tensor of {} dims",
                    order.size(), dim());
  const Tensor base = strided();
  Shape sh, st;
  std::vector<bool> seen(dim(), false);
  for (int a : order) {
    const int ax = wrap_axis(a, dim(), "permute");
    INGOT_CHECK_SHAPE(!seen[ax], "permute: axis {} repeated", a);
    seen[ax] = true;
    sh.push_back(base.shape()[ax]);
    st.push_back(base.strides()[ax]);
  }
  std::vector<int> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[wrap_axis(order[i], dim(), "permute")] = static_cast<int>(i);
  return autograd::record_view(*this, make_view(sh, st, base.offset()), "PermuteBackward",
                               [inverse](const Tensor& g) { return g.permute(inverse); });
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  std::vector<int> order(dim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[wrap_axis(a, dim(), "transpose")], order[wrap_axis(b, dim(), "transpose")]);
  return permute(order);
}

Tensor Tensor::slice(int64_t dim_, int64_t start, int64_t end, int64_t step) const {
  const int d = wrap_axis(dim_, dim(), "slice");
  INGOT_CHECK_SHAPE(step > 0, "slice: step must be positive, got {}", step);
  const int64_t n = shape()[d];
  auto clampi = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  const int64_t s = clampi(start), e = std::max(clampi(end), s);
  const Tensor base = strided();
  Shape sh = base.shape(), st = base.strides();
  sh[d] = (e - s + step - 1) / step;
  st[d] = base.strides()[d] * step;
  return autograd::record_view(*this, make_view(sh, st, base.offset() + s * base.strides()[d]), "SliceBackward",
                               [in = shape(), d, s, e, step](const Tensor& g) {
                                 Tensor z = zeros(in, g.dtype(), g.device());
                                 z.slice(d, s, e, step).copy_(g);
                                 return z;
                               });
}

Tensor Tensor::select(int64_t dim_, int64_t index) const {
  const int d = wrap_axis(dim_, dim(), "select");
  const int64_t n = shape()[d];
  INGOT_CHECK_SHAPE(index >= -n && index < n, "select: index {} out of range for dim {} of size {}", index, d, n);
  const Tensor base = strided();
  Shape sh = base.shape(), st = base.strides();
  const int64_t off = base.offset() + (index < 0 ? index + n : index) * st[d];
  sh.erase(d);
  st.erase(d);
  return autograd::record_view(*this, make_view(sh, st, off), "SelectBackward",
                               [in = shape(), d, i = index < 0 ? index + n : index](const Tensor& g) {
                                 Tensor z = zeros(in, g.dtype(), g.device());
                                 z.select(d, i).copy_(g);
                                 return z;
                               });
}

Tensor Tensor::expand(const Shape& target) const {
  INGOT_CHECK_SHAPE(target.size() >= dim(), "expand: cannot expand {} to fewer dims {}", shape().str(), target.str());
  const Tensor base = strided();
  Shape st;
  st.resize(target.size());
  Shape sh = target;
  const int lead = target.size() - dim();
  for (int i = 0; i < target.size(); ++i) {
    if (i < lead) {
      INGOT_CHECK_SHAPE(target[i] >= 0, "expand: {} to {}", shape().str(), target.str());
      st[i] = 0;
      continue;
    }
    const int64_t cur = base.shape()[i - lead];
    if (target[i] == -1 || target[i] == cur) {
      sh[i] = cur;
      st[i] = base.strides()[i - lead];
    } else {
      INGOT_CHECK_SHAPE(cur == 1, "expand: dim {} of {} is {} and cannot become {}", i - lead, shape().str(), cur,
                        target[i]);
      st[i] = 0;
    }
  }
  return autograd::record_view(*this, make_view(sh, st, base.offset()), "ExpandBackward",
                               [in = shape()](const Tensor& g) { return sum_to_shape(g, in); });
}

Tensor Tensor::squeeze(int64_t dim_) const {
  const int d = wrap_axis(dim_, dim(), "squeeze");
  if (dim() == 0 || shape()[d] != 1) return *this;
  const Tensor base = strided();
  Shape sh = base.shape(), st = base.strides();
  sh.erase(d);
  st.erase(d);
  return autograd::record_view(*this, make_view(sh, st, base.offset()), "SqueezeBackward",
                               [in = this->shape()](const Tensor& g) { return g.reshape(in); });
}

Tensor Tensor::unsqueeze(int64_t dim_) const {
  const int d = wrap_axis(dim_ < 0 ? dim_ + dim() + 1 : dim_, dim() + 1, "unsqueeze");
  const Tensor base = strided();
  Shape sh = base.shape(), st = base.strides();
  const int64_t stride = d < dim() ? st[d] * sh[d] : 1;
  sh.insert(d, 1);
  st.insert(d, stride);
  return autograd::record_view(*this, make_view(sh, st, base.offset()), "UnsqueezeBackward",
                               [in = this->shape()](const Tensor& g) { return g.reshape(in); });
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (dim() == 0) return reshape(Shape{1});
  const int s = wrap_axis(start, dim(), "flatten"), e = wrap_axis(end, dim(), "flatten");
  INGOT_CHECK_SHAPE(s <= e, "flatten: start {} after end {}", start, end);
  Shape sh;
  for (int i = 0; i < s; ++i) sh.push_back(shape()[i]);
  int64_t n = 1;
  for (int i = s; i <= e; ++i) n *= shape()[i];
  sh.push_back(n);
  for (int i = e + 1; i < dim(); ++i) sh.push_back(shape()[i]);
  return reshape(sh);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  if (is_opaque()) return strided();
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape(), dtype(), device());
  {
    NoGradGuard no_grad;  // the copy is recorded below as one node
    out.copy_(*this);
  }
  return autograd::record_view(*this, out, "CloneBackward", [](const Tensor& g) { return g; });
}

Tensor Tensor::to(DType dt) const {
  if (dt == dtype()) return *this;
  // An opaque layout goes to the cast as it is: a backend that casts in that layout keeps it,
  // dispatch reorders for one that does not.
  auto out = run_op(INGOT_OP_CAST, {*this}, {OutputSpec{shape(), dt}});
  return out.front();
}

Tensor Tensor::to(Device dev) const {
  if (dev == device()) return *this;
  OpRecorder* const recorder = op_recorder();
  if (recorder != nullptr && !(device().is_cpu() && !dev.is_cpu())) recorder->unrecordable("a copy between devices");
  const Tensor src = contiguous();
  Tensor dst = empty(shape(), dtype(), dev);
  const Device accel = dev.is_cpu() ? device() : dev;
  const Backend& b = BackendRegistry::instance().device_backend(accel);  // the one holding its memory
  try {
    b.copy(accel.index, dst.storage()->data(), dev.kind,
           static_cast<const char*>(src.storage()->data()) + src.offset() * dtype_size(dtype()), device().kind,
           static_cast<size_t>(src.numel() * dtype_size(dtype())), exec_context());
  } catch (const PluginError& e) {
    throw PluginError(fmt::format("copy {} -> {}: {}", device().str(), dev.str(), e.what()));
  }
  if (recorder != nullptr && device().is_cpu()) recorder->record_upload(src, dst);  // host -> device
  return autograd::record_view(*this, dst, "ToDeviceBackward", [src = device()](const Tensor& g) { return g.to(src); });
}

void Tensor::copy_(const Tensor& src) const {
  check_inplace(*this, "copy_");
  autograd::refuse_shape_only(INGOT_OP_COPY, {src, *this});  // in-place ops bypass the dispatch chain
  INGOT_CHECK(!GradMode::is_enabled() || !src.requires_grad(),
              "copy_: the source requires grad and an in-place copy would drop its gradient: use clone() or an op, "
              "or copy under NoGradGuard");
  Tensor s = src.device() == device() ? src : src.to(device());
  s = s.to(dtype());
  if (!(s.shape() == shape())) s = s.expand(shape());
  run_op_into(INGOT_OP_COPY, {s}, {*this});
}

void Tensor::fill_(double value) const {
  check_inplace(*this, "fill_");
  autograd::refuse_shape_only(INGOT_OP_FILL, {*this});
  auto attr = make_attr<ingot_attr_scalar>();
  attr.value = value;
  run_op_into(INGOT_OP_FILL, {}, {*this}, &attr);
}

double Tensor::item() const {
  INGOT_CHECK_SHAPE(numel() == 1, "item(): tensor of shape {} has {} elements, expected 1", shape().str(), numel());
  const Tensor c = to(Device::cpu()).contiguous();
  return load_element(c.dtype(), static_cast<const char*>(c.raw_host_data()) + c.offset() * dtype_size(c.dtype()));
}

}  // namespace ingot
