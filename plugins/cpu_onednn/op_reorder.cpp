// Reorder family: COPY between any two positive-stride layouts of the same shape, and CAST
// between f32 / bf16 / s8 / u8 / s32 where oneDNN's conversion equals torch's: widening and
// float rounding only (float -> int rounds and saturates in oneDNN but truncates in torch, and
// narrowing int casts saturate instead of wrapping, so those are declined). A cast of one of our
// blocked tensors between f32 and bf16 keeps its blocking: autocast's conv (bf16) -> cast -> batch
// norm (f32) chain then converts in one pass instead of out to NCHW and back into blocks.
#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_COPY || op == INGOT_OP_CAST; }

bool exact_cast(int32_t from, int32_t to) {
  if (from == to) return true;
  switch (from) {
    case INGOT_F32:
      return to == INGOT_BF16;
    case INGOT_BF16:
      return to == INGOT_F32;
    case INGOT_I8:
    case INGOT_U8:
      return to == INGOT_F32 || to == INGOT_BF16 || to == INGOT_I32;
    case INGOT_I32:
      return to == INGOT_F32;
    default:
      return false;
  }
}

bool shapes_ok(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.n_in != 1 || c.n_out != 1) return false;
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0];
  if (!is_plain_host(x) || !is_plain_host(y)) return false;
  if (y.layout == INGOT_LAYOUT_STRIDED ? !has_positive_strides(y) : be.opaque_md(y) == nullptr) return false;
  if (c.op == INGOT_OP_COPY ? x.dtype != y.dtype : !exact_cast(x.dtype, y.dtype)) return false;
  if (x.ndim != y.ndim) return false;
  for (int d = 0; d < x.ndim; ++d) {
    if (x.shape[d] != y.shape[d]) return false;
  }
  return be.opaque_md(x) != nullptr || (x.layout == INGOT_LAYOUT_STRIDED && has_positive_strides(x));
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c) {
  return be.reorder_plan(*be.md_of(c.in[0]), *be.md_of(c.out[0]));
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  if (!shapes_ok(be, c)) return false;
  auto p = get_plan(be, c);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  if (!shapes_ok(ex.backend(), c)) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn copy/cast: unsupported call");
  auto p = get_plan(ex.backend(), c);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn copy/cast: " + p->impl);
  ex.serial_if_small(sdk::numel(c.out[0]));
  ex.allocate();
  ex.bind(*p, DNNL_ARG_FROM, sdk::data_ptr(c.in[0]));
  ex.bind(*p, DNNL_ARG_TO, sdk::data_ptr(c.out[0]));
  ex.run(*p, c.op);
}

bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (c.op != INGOT_OP_CAST || index != 0 || c.n_in != 1) return false;
  const dnnl::memory::desc* md = be.opaque_md(c.in[0]);
  const int32_t from = c.in[0].dtype, to = outputs[0].dtype;
  const bool floats = (from == INGOT_F32 && to == INGOT_BF16) || (from == INGOT_BF16 && to == INGOT_F32);
  if (md == nullptr || !floats) return false;
  dnnl_memory_desc_t d = md->data;  // the same blocking, the other element type
  d.data_type = static_cast<dnnl_data_type_t>(to_dnnl(to));
  const dnnl::memory::desc out(d);
  std::shared_ptr<Plan> p = be.reorder_plan(*md, out);
  return p->prim && !is_ref_impl(p->impl) && set_opaque_output(be, outputs, 0, out);
}

}  // namespace

const OpFamily& reorder_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout};
  return f;
}

}  // namespace ingot::onednn
