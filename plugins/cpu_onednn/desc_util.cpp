// Descriptor conversion and plan keys for the cpu_onednn backend.
#include "desc_util.h"

namespace ingot::onednn {

bool fusable_activation(int32_t activation) {
  return activation == INGOT_ACT_NONE || activation == INGOT_ACT_RELU || activation == INGOT_ACT_GELU ||
         activation == INGOT_ACT_GELU_TANH || activation == INGOT_ACT_RELU6;
}

void append_activation(dnnl::post_ops& po, int32_t activation) {
  switch (activation) {
    case INGOT_ACT_RELU:
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      return;
    case INGOT_ACT_GELU_TANH:
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f);
      return;
    case INGOT_ACT_GELU:
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
      return;
    case INGOT_ACT_RELU6:  // clip_v2: min(max(x, 0), 6), NaN kept
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, 0.f, 6.f);
      return;
    default:
      return;
  }
}

dt to_dnnl(int32_t dtype) {
  switch (dtype) {
    case INGOT_F32:
      return dt::f32;
    case INGOT_BF16:
      return dt::bf16;
    case INGOT_I8:
      return dt::s8;
    case INGOT_U8:
      return dt::u8;
    case INGOT_I32:
      return dt::s32;
    default:
      return dt::undef;
  }
}

dims dims_of(const ingot_tensor_desc& d) {
  if (d.ndim == 0) return {1};
  return dims(d.shape, d.shape + d.ndim);
}

dnnl::memory::desc strided_md(const ingot_tensor_desc& d) {
  if (d.ndim == 0) return dnnl::memory::desc({1}, to_dnnl(d.dtype), dims{1});
  dims shape = dims_of(d);
  dims strides(d.strides, d.strides + d.ndim);
  for (int i = d.ndim - 1; i >= 0; --i) {
    if (shape[i] == 1) strides[i] = i == d.ndim - 1 ? 1 : strides[i + 1] * shape[i + 1];
  }
  return dnnl::memory::desc(shape, to_dnnl(d.dtype), strides);
}

dnnl::memory::desc plain_md(const dims& shape, dt type) {
  dims strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return dnnl::memory::desc(shape, type, strides);
}

bool has_positive_strides(const ingot_tensor_desc& d) {
  for (int i = 0; i < d.ndim; ++i) {
    if (d.shape[i] != 1 && d.strides[i] <= 0) return false;
  }
  return true;
}

bool is_compute_dtype(int32_t dtype) {
  static const bool bf16 = dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core ||
                           dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_vnni ||
                           dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_bf16 ||
                           dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx;
  return dtype == INGOT_F32 || (dtype == INGOT_BF16 && bf16);
}

bool is_plain_host(const ingot_tensor_desc& d) {
  return d.device_kind == INGOT_DEVICE_CPU && to_dnnl(d.dtype) != dt::undef && d.ndim <= INGOT_MAX_DIMS &&
         sdk::numel(d) > 0;
}

std::string effective_isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

KeyBuilder& KeyBuilder::add_md(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  const bool plain = d.format_kind == dnnl_blocked && d.format_desc.blocking.inner_nblks == 0 && d.extra.flags == 0;
  if (!plain) return add(d);
  const auto n = static_cast<size_t>(d.ndims);
  add(d.ndims).add(d.data_type).add(d.offset0);
  add_bytes(d.dims, n * sizeof(d.dims[0])).add_bytes(d.padded_dims, n * sizeof(d.padded_dims[0]));
  return add_bytes(d.format_desc.blocking.strides, n * sizeof(d.format_desc.blocking.strides[0]));
}

KeyBuilder& KeyBuilder::add_desc(const ingot_tensor_desc& d, const dnnl::memory::desc* opaque_md) {
  add(d.dtype).add(d.ndim).add(d.layout);
  add_bytes(d.shape, sizeof(int64_t) * static_cast<size_t>(d.ndim));
  if (opaque_md != nullptr) return add_md(*opaque_md);
  return add_bytes(d.strides, sizeof(int64_t) * static_cast<size_t>(d.ndim));
}

}  // namespace ingot::onednn
