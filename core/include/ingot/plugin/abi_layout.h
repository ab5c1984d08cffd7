// The ABI 2.0 layout, frozen: size and member offsets of every struct of ingot_plugin.h on a
// 64-bit target. A change that moves a member or grows a struct fails to compile here (sdk.h
// includes this, so core and every plugin check it): append members only, in a new minor, and
// add their offsets below.
#pragma once

#include <cstddef>

#include "ingot/plugin/ingot_plugin.h"

static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8, "the Ingot plugin ABI is defined for 64-bit targets");
static_assert(sizeof(int) == 4 && sizeof(double) == 8, "the Ingot plugin ABI needs 32-bit int and 64-bit double");

#define INGOT_ABI_OFFSET(type, member, offset) \
  static_assert(offsetof(type, member) == (offset), "ABI layout of " #type "::" #member " changed")

static_assert(sizeof(ingot_tensor_desc) == 192, "ABI layout of ingot_tensor_desc changed");
INGOT_ABI_OFFSET(ingot_tensor_desc, struct_size, 0);
INGOT_ABI_OFFSET(ingot_tensor_desc, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_tensor_desc, dtype, 8);
INGOT_ABI_OFFSET(ingot_tensor_desc, ndim, 12);
INGOT_ABI_OFFSET(ingot_tensor_desc, shape, 16);
INGOT_ABI_OFFSET(ingot_tensor_desc, strides, 80);
INGOT_ABI_OFFSET(ingot_tensor_desc, byte_offset, 144);
INGOT_ABI_OFFSET(ingot_tensor_desc, device_kind, 152);
INGOT_ABI_OFFSET(ingot_tensor_desc, device_index, 156);
INGOT_ABI_OFFSET(ingot_tensor_desc, data, 160);
INGOT_ABI_OFFSET(ingot_tensor_desc, layout, 168);
INGOT_ABI_OFFSET(ingot_tensor_desc, reserved, 172);
INGOT_ABI_OFFSET(ingot_tensor_desc, layout_handle, 176);
INGOT_ABI_OFFSET(ingot_tensor_desc, nbytes, 184);

static_assert(sizeof(ingot_status) == 32, "ABI layout of ingot_status changed");
INGOT_ABI_OFFSET(ingot_status, struct_size, 0);
INGOT_ABI_OFFSET(ingot_status, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_status, code, 8);
INGOT_ABI_OFFSET(ingot_status, message, 16);
INGOT_ABI_OFFSET(ingot_status, release, 24);

static_assert(sizeof(ingot_attr_none) == 8, "ABI layout of ingot_attr_none changed");
INGOT_ABI_OFFSET(ingot_attr_none, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_none, abi_minor, 4);

static_assert(sizeof(ingot_attr_axis) == 12, "ABI layout of ingot_attr_axis changed");
INGOT_ABI_OFFSET(ingot_attr_axis, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_axis, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_axis, axis, 8);

static_assert(sizeof(ingot_attr_scalar) == 16, "ABI layout of ingot_attr_scalar changed");
INGOT_ABI_OFFSET(ingot_attr_scalar, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_scalar, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_scalar, value, 8);

static_assert(sizeof(ingot_attr_softplus) == 24, "ABI layout of ingot_attr_softplus changed");
INGOT_ABI_OFFSET(ingot_attr_softplus, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_softplus, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_softplus, beta, 8);
INGOT_ABI_OFFSET(ingot_attr_softplus, threshold, 16);

static_assert(sizeof(ingot_attr_clamp) == 32, "ABI layout of ingot_attr_clamp changed");
INGOT_ABI_OFFSET(ingot_attr_clamp, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_clamp, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_clamp, has_min, 8);
INGOT_ABI_OFFSET(ingot_attr_clamp, has_max, 12);
INGOT_ABI_OFFSET(ingot_attr_clamp, min, 16);
INGOT_ABI_OFFSET(ingot_attr_clamp, max, 24);

static_assert(sizeof(ingot_attr_matmul) == 16, "ABI layout of ingot_attr_matmul changed");
INGOT_ABI_OFFSET(ingot_attr_matmul, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_matmul, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_matmul, has_bias, 8);
INGOT_ABI_OFFSET(ingot_attr_matmul, activation, 12);

static_assert(sizeof(ingot_attr_conv2d) == 80, "ABI layout of ingot_attr_conv2d changed");
INGOT_ABI_OFFSET(ingot_attr_conv2d, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_conv2d, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_conv2d, stride, 8);
INGOT_ABI_OFFSET(ingot_attr_conv2d, padding, 24);
INGOT_ABI_OFFSET(ingot_attr_conv2d, dilation, 40);
INGOT_ABI_OFFSET(ingot_attr_conv2d, groups, 56);
INGOT_ABI_OFFSET(ingot_attr_conv2d, has_bias, 64);
INGOT_ABI_OFFSET(ingot_attr_conv2d, activation, 68);
INGOT_ABI_OFFSET(ingot_attr_conv2d, algorithm, 72);  // ABI 2.5

static_assert(sizeof(ingot_attr_pool2d) == 72, "ABI layout of ingot_attr_pool2d changed");
INGOT_ABI_OFFSET(ingot_attr_pool2d, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_pool2d, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_pool2d, kernel, 8);
INGOT_ABI_OFFSET(ingot_attr_pool2d, stride, 24);
INGOT_ABI_OFFSET(ingot_attr_pool2d, padding, 40);
INGOT_ABI_OFFSET(ingot_attr_pool2d, ceil_mode, 56);
INGOT_ABI_OFFSET(ingot_attr_pool2d, count_include_pad, 60);
INGOT_ABI_OFFSET(ingot_attr_pool2d, indices_unused, 64);

static_assert(sizeof(ingot_attr_pad) == 144, "ABI layout of ingot_attr_pad changed");
INGOT_ABI_OFFSET(ingot_attr_pad, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_pad, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_pad, pads, 8);
INGOT_ABI_OFFSET(ingot_attr_pad, value, 136);

static_assert(sizeof(ingot_attr_sort) == 20, "ABI layout of ingot_attr_sort changed");
INGOT_ABI_OFFSET(ingot_attr_sort, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_sort, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_sort, axis, 8);
INGOT_ABI_OFFSET(ingot_attr_sort, descending, 12);
INGOT_ABI_OFFSET(ingot_attr_sort, stable, 16);

static_assert(sizeof(ingot_attr_topk) == 32, "ABI layout of ingot_attr_topk changed");
INGOT_ABI_OFFSET(ingot_attr_topk, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_topk, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_topk, axis, 8);
INGOT_ABI_OFFSET(ingot_attr_topk, largest, 12);
INGOT_ABI_OFFSET(ingot_attr_topk, k, 16);
INGOT_ABI_OFFSET(ingot_attr_topk, sorted, 24);

static_assert(sizeof(ingot_attr_arange) == 24, "ABI layout of ingot_attr_arange changed");
INGOT_ABI_OFFSET(ingot_attr_arange, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_arange, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_arange, start, 8);
INGOT_ABI_OFFSET(ingot_attr_arange, step, 16);

static_assert(sizeof(ingot_attr_layer_norm) == 24, "ABI layout of ingot_attr_layer_norm changed");
INGOT_ABI_OFFSET(ingot_attr_layer_norm, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_layer_norm, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_layer_norm, normalized_ndim, 8);
INGOT_ABI_OFFSET(ingot_attr_layer_norm, has_affine, 12);
INGOT_ABI_OFFSET(ingot_attr_layer_norm, eps, 16);

static_assert(sizeof(ingot_attr_batch_norm) == 32, "ABI layout of ingot_attr_batch_norm changed");
INGOT_ABI_OFFSET(ingot_attr_batch_norm, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_batch_norm, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_batch_norm, training, 8);
INGOT_ABI_OFFSET(ingot_attr_batch_norm, has_affine, 12);
INGOT_ABI_OFFSET(ingot_attr_batch_norm, eps, 16);
INGOT_ABI_OFFSET(ingot_attr_batch_norm, momentum, 24);

static_assert(sizeof(ingot_attr_sgd) == 48, "ABI layout of ingot_attr_sgd changed");
INGOT_ABI_OFFSET(ingot_attr_sgd, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_sgd, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_sgd, lr, 8);
INGOT_ABI_OFFSET(ingot_attr_sgd, momentum, 16);
INGOT_ABI_OFFSET(ingot_attr_sgd, dampening, 24);
INGOT_ABI_OFFSET(ingot_attr_sgd, weight_decay, 32);
INGOT_ABI_OFFSET(ingot_attr_sgd, nesterov, 40);
INGOT_ABI_OFFSET(ingot_attr_sgd, first_step, 44);

static_assert(sizeof(ingot_attr_adam) == 64, "ABI layout of ingot_attr_adam changed");
INGOT_ABI_OFFSET(ingot_attr_adam, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_adam, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_adam, lr, 8);
INGOT_ABI_OFFSET(ingot_attr_adam, beta1, 16);
INGOT_ABI_OFFSET(ingot_attr_adam, beta2, 24);
INGOT_ABI_OFFSET(ingot_attr_adam, eps, 32);
INGOT_ABI_OFFSET(ingot_attr_adam, weight_decay, 40);
INGOT_ABI_OFFSET(ingot_attr_adam, step, 48);
INGOT_ABI_OFFSET(ingot_attr_adam, decoupled, 56);
INGOT_ABI_OFFSET(ingot_attr_adam, amsgrad, 60);

static_assert(sizeof(ingot_attr_rng) == 40, "ABI layout of ingot_attr_rng changed");
INGOT_ABI_OFFSET(ingot_attr_rng, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_rng, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_rng, seed, 8);
INGOT_ABI_OFFSET(ingot_attr_rng, offset, 16);
INGOT_ABI_OFFSET(ingot_attr_rng, a, 24);
INGOT_ABI_OFFSET(ingot_attr_rng, b, 32);

static_assert(sizeof(ingot_attr_attention) == 48, "ABI layout of ingot_attr_attention changed");
INGOT_ABI_OFFSET(ingot_attr_attention, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_attention, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_attention, scale, 8);
INGOT_ABI_OFFSET(ingot_attr_attention, dropout_p, 16);
INGOT_ABI_OFFSET(ingot_attr_attention, seed, 24);
INGOT_ABI_OFFSET(ingot_attr_attention, offset, 32);
INGOT_ABI_OFFSET(ingot_attr_attention, causal, 40);
INGOT_ABI_OFFSET(ingot_attr_attention, mask, 44);

static_assert(sizeof(ingot_attr_cross_entropy) == 24, "ABI layout of ingot_attr_cross_entropy changed");
INGOT_ABI_OFFSET(ingot_attr_cross_entropy, struct_size, 0);
INGOT_ABI_OFFSET(ingot_attr_cross_entropy, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_attr_cross_entropy, ignore_index, 8);
INGOT_ABI_OFFSET(ingot_attr_cross_entropy, label_smoothing, 16);

static_assert(sizeof(ingot_exec_context) == 40, "ABI layout of ingot_exec_context changed");
INGOT_ABI_OFFSET(ingot_exec_context, struct_size, 0);
INGOT_ABI_OFFSET(ingot_exec_context, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_exec_context, num_threads, 8);
INGOT_ABI_OFFSET(ingot_exec_context, reserved, 12);
INGOT_ABI_OFFSET(ingot_exec_context, host, 16);
INGOT_ABI_OFFSET(ingot_exec_context, workspace, 24);
INGOT_ABI_OFFSET(ingot_exec_context, stream, 32);

static_assert(sizeof(ingot_memory_stats) == 48, "ABI layout of ingot_memory_stats changed");
INGOT_ABI_OFFSET(ingot_memory_stats, struct_size, 0);
INGOT_ABI_OFFSET(ingot_memory_stats, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_memory_stats, allocated, 8);
INGOT_ABI_OFFSET(ingot_memory_stats, reserved, 16);
INGOT_ABI_OFFSET(ingot_memory_stats, peak_allocated, 24);
INGOT_ABI_OFFSET(ingot_memory_stats, allocations, 32);
INGOT_ABI_OFFSET(ingot_memory_stats, cache_hits, 40);

static_assert(sizeof(ingot_plan_cache_stats) == 40, "ABI layout of ingot_plan_cache_stats changed");
INGOT_ABI_OFFSET(ingot_plan_cache_stats, struct_size, 0);
INGOT_ABI_OFFSET(ingot_plan_cache_stats, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_plan_cache_stats, entries, 8);
INGOT_ABI_OFFSET(ingot_plan_cache_stats, capacity, 16);
INGOT_ABI_OFFSET(ingot_plan_cache_stats, hits, 24);
INGOT_ABI_OFFSET(ingot_plan_cache_stats, misses, 32);

static_assert(sizeof(ingot_device_table) == 192, "ABI layout of ingot_device_table changed");
INGOT_ABI_OFFSET(ingot_device_table, struct_size, 0);
INGOT_ABI_OFFSET(ingot_device_table, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_device_table, self, 8);
INGOT_ABI_OFFSET(ingot_device_table, device_kind, 16);
INGOT_ABI_OFFSET(ingot_device_table, reserved, 20);
INGOT_ABI_OFFSET(ingot_device_table, device_count, 24);
INGOT_ABI_OFFSET(ingot_device_table, alloc, 32);
INGOT_ABI_OFFSET(ingot_device_table, free, 40);
INGOT_ABI_OFFSET(ingot_device_table, copy, 48);
INGOT_ABI_OFFSET(ingot_device_table, copy_async, 56);
INGOT_ABI_OFFSET(ingot_device_table, host_alloc_pinned, 64);
INGOT_ABI_OFFSET(ingot_device_table, host_free_pinned, 72);
INGOT_ABI_OFFSET(ingot_device_table, synchronize, 80);
INGOT_ABI_OFFSET(ingot_device_table, native_stream, 88);
INGOT_ABI_OFFSET(ingot_device_table, event_create, 96);
INGOT_ABI_OFFSET(ingot_device_table, event_record, 104);
INGOT_ABI_OFFSET(ingot_device_table, event_synchronize, 112);
INGOT_ABI_OFFSET(ingot_device_table, event_elapsed_ms, 120);
INGOT_ABI_OFFSET(ingot_device_table, event_destroy, 128);
INGOT_ABI_OFFSET(ingot_device_table, memory_stats, 136);
INGOT_ABI_OFFSET(ingot_device_table, reset_peak_memory_stats, 144);
INGOT_ABI_OFFSET(ingot_device_table, empty_cache, 152);
INGOT_ABI_OFFSET(ingot_device_table, stream_create, 160);
INGOT_ABI_OFFSET(ingot_device_table, stream_destroy, 168);
INGOT_ABI_OFFSET(ingot_device_table, stream_wait_event, 176);
INGOT_ABI_OFFSET(ingot_device_table, memory_info, 184);

static_assert(sizeof(ingot_compute_table) == 104, "ABI layout of ingot_compute_table changed");
INGOT_ABI_OFFSET(ingot_compute_table, struct_size, 0);
INGOT_ABI_OFFSET(ingot_compute_table, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_compute_table, self, 8);
INGOT_ABI_OFFSET(ingot_compute_table, supports, 16);
INGOT_ABI_OFFSET(ingot_compute_table, choose_output_layout, 24);
INGOT_ABI_OFFSET(ingot_compute_table, execute, 32);
INGOT_ABI_OFFSET(ingot_compute_table, to_strided, 40);
INGOT_ABI_OFFSET(ingot_compute_table, layout_retain, 48);
INGOT_ABI_OFFSET(ingot_compute_table, layout_release, 56);
INGOT_ABI_OFFSET(ingot_compute_table, plan_cache_stats, 64);
INGOT_ABI_OFFSET(ingot_compute_table, impl_name, 72);
INGOT_ABI_OFFSET(ingot_compute_table, choose_input_layout, 80);  // ABI 2.5
INGOT_ABI_OFFSET(ingot_compute_table, from_strided, 88);         // ABI 2.5
INGOT_ABI_OFFSET(ingot_compute_table, runs_in_place, 96);        // ABI 2.6

static_assert(sizeof(ingot_backend) == 40, "ABI layout of ingot_backend changed");
INGOT_ABI_OFFSET(ingot_backend, struct_size, 0);
INGOT_ABI_OFFSET(ingot_backend, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_backend, name, 8);
INGOT_ABI_OFFSET(ingot_backend, priority, 16);
INGOT_ABI_OFFSET(ingot_backend, reserved, 20);
INGOT_ABI_OFFSET(ingot_backend, device, 24);
INGOT_ABI_OFFSET(ingot_backend, compute, 32);

static_assert(sizeof(ingot_communicator) == 104, "ABI layout of ingot_communicator changed");
INGOT_ABI_OFFSET(ingot_communicator, struct_size, 0);
INGOT_ABI_OFFSET(ingot_communicator, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_communicator, self, 8);
INGOT_ABI_OFFSET(ingot_communicator, name, 16);
INGOT_ABI_OFFSET(ingot_communicator, device_kind, 24);
INGOT_ABI_OFFSET(ingot_communicator, reserved, 28);
INGOT_ABI_OFFSET(ingot_communicator, create, 32);
INGOT_ABI_OFFSET(ingot_communicator, all_reduce, 40);
INGOT_ABI_OFFSET(ingot_communicator, broadcast, 48);
INGOT_ABI_OFFSET(ingot_communicator, all_gather, 56);
INGOT_ABI_OFFSET(ingot_communicator, reduce_scatter, 64);
INGOT_ABI_OFFSET(ingot_communicator, barrier, 72);
INGOT_ABI_OFFSET(ingot_communicator, destroy, 80);
INGOT_ABI_OFFSET(ingot_communicator, send, 88);  // ABI 2.3
INGOT_ABI_OFFSET(ingot_communicator, recv, 96);  // ABI 2.3

static_assert(sizeof(ingot_host_api) == 40, "ABI layout of ingot_host_api changed");
INGOT_ABI_OFFSET(ingot_host_api, struct_size, 0);
INGOT_ABI_OFFSET(ingot_host_api, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_host_api, host, 8);
INGOT_ABI_OFFSET(ingot_host_api, log, 16);
INGOT_ABI_OFFSET(ingot_host_api, kv_set, 24);
INGOT_ABI_OFFSET(ingot_host_api, kv_get, 32);

static_assert(sizeof(ingot_plugin_info) == 40, "ABI layout of ingot_plugin_info changed");
INGOT_ABI_OFFSET(ingot_plugin_info, struct_size, 0);
INGOT_ABI_OFFSET(ingot_plugin_info, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_plugin_info, abi_major, 8);
INGOT_ABI_OFFSET(ingot_plugin_info, kinds, 12);
INGOT_ABI_OFFSET(ingot_plugin_info, name, 16);
INGOT_ABI_OFFSET(ingot_plugin_info, version, 24);
INGOT_ABI_OFFSET(ingot_plugin_info, description, 32);

static_assert(sizeof(ingot_component) == 24, "ABI layout of ingot_component changed");
INGOT_ABI_OFFSET(ingot_component, struct_size, 0);
INGOT_ABI_OFFSET(ingot_component, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_component, kind, 8);
INGOT_ABI_OFFSET(ingot_component, reserved, 12);
INGOT_ABI_OFFSET(ingot_component, table, 16);

static_assert(sizeof(ingot_plugin_components) == 24, "ABI layout of ingot_plugin_components changed");
INGOT_ABI_OFFSET(ingot_plugin_components, struct_size, 0);
INGOT_ABI_OFFSET(ingot_plugin_components, abi_minor, 4);
INGOT_ABI_OFFSET(ingot_plugin_components, n_components, 8);
INGOT_ABI_OFFSET(ingot_plugin_components, reserved, 12);
INGOT_ABI_OFFSET(ingot_plugin_components, components, 16);

#undef INGOT_ABI_OFFSET
