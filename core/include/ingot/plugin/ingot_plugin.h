/* Ingot plugin ABI: the plain C99 boundary between core and run-time loaded plugins.
 * Rules: every struct starts with struct_size and abi_minor; tables are append-only; the major
 * version must match exactly; whoever allocates frees; no C++ type crosses this boundary. */
#ifndef INGOT_PLUGIN_H
#define INGOT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INGOT_ABI_MAJOR 1
#define INGOT_ABI_MINOR 2
#define INGOT_MAX_DIMS 8

#if defined(__GNUC__)
#define INGOT_EXPORT __attribute__((visibility("default")))
#else
#define INGOT_EXPORT
#endif

/* ---- dtypes, devices, layouts ---------------------------------------------------------- */
typedef enum ingot_dtype {
  INGOT_F32 = 0,
  INGOT_F64 = 1,
  INGOT_F16 = 2,
  INGOT_BF16 = 3,
  INGOT_I8 = 4,
  INGOT_U8 = 5,
  INGOT_I32 = 6,
  INGOT_I64 = 7,
  INGOT_BOOL = 8,
  INGOT_DTYPE_COUNT = 9
} ingot_dtype;

/* dtype sets used by the op table's dtypes column (bit i = dtype i) */
#define INGOT_DTYPES_FLOAT ((1u << INGOT_F32) | (1u << INGOT_F64) | (1u << INGOT_F16) | (1u << INGOT_BF16))
#define INGOT_DTYPES_INT ((1u << INGOT_I8) | (1u << INGOT_U8) | (1u << INGOT_I32) | (1u << INGOT_I64))
#define INGOT_DTYPES_NUM (INGOT_DTYPES_FLOAT | INGOT_DTYPES_INT)
#define INGOT_DTYPES_ANY (INGOT_DTYPES_NUM | (1u << INGOT_BOOL))

typedef enum ingot_device_kind { INGOT_DEVICE_CPU = 0, INGOT_DEVICE_CUDA = 1 } ingot_device_kind;

typedef enum ingot_layout_kind {
  INGOT_LAYOUT_STRIDED = 0, /* shape + strides (in elements) describe the data */
  INGOT_LAYOUT_OPAQUE = 1   /* backend-owned layout (e.g. a oneDNN blocked format) */
} ingot_layout_kind;

/* A tensor as a backend sees it. data + byte_offset is the first element. For an opaque
 * layout, `layout_handle` belongs to the backend that produced it and `nbytes` is the buffer size. */
typedef struct ingot_tensor_desc {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[INGOT_MAX_DIMS];
  int64_t strides[INGOT_MAX_DIMS];
  int64_t byte_offset;
  int32_t device_kind;
  int32_t device_index;
  void* data;
  int32_t layout;
  int32_t reserved;
  void* layout_handle;
  int64_t nbytes;
} ingot_tensor_desc;

/* ---- status ------------------------------------------------------------------------------ */
typedef enum ingot_status_code {
  INGOT_OK = 0,
  INGOT_ERR_INVALID_ARGUMENT = 1,
  INGOT_ERR_UNSUPPORTED = 2,
  INGOT_ERR_OUT_OF_MEMORY = 3,
  INGOT_ERR_RUNTIME = 4,
  INGOT_ERR_NO_DEVICE = 5
} ingot_status_code;

/* NULL means success. A non-NULL status is released by its `release`, set by its creator. */
typedef struct ingot_status {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t code;
  const char* message;
  void (*release)(struct ingot_status* self);
} ingot_status;

/* ---- op kinds and attributes ------------------------------------------------------------- */
typedef enum ingot_op_kind {
#define INGOT_OP(ENUM, name, n_in, n_out, attr, dtypes, grad) INGOT_OP_##ENUM,
#include "ingot/ops/op_table.def"
#undef INGOT_OP
  INGOT_OP_COUNT
} ingot_op_kind;

typedef enum ingot_activation {
  INGOT_ACT_NONE = 0,
  INGOT_ACT_RELU = 1,
  INGOT_ACT_GELU = 2 /* erf form */
} ingot_activation;

#define INGOT_ATTR_HEAD \
  uint32_t struct_size;  \
  uint32_t abi_minor

typedef struct ingot_attr_none { INGOT_ATTR_HEAD; } ingot_attr_none;
typedef struct ingot_attr_axis { INGOT_ATTR_HEAD; int32_t axis; } ingot_attr_axis;
typedef struct ingot_attr_scalar { INGOT_ATTR_HEAD; double value; } ingot_attr_scalar;
typedef struct ingot_attr_softplus { INGOT_ATTR_HEAD; double beta; double threshold; } ingot_attr_softplus;
typedef struct ingot_attr_clamp {
  INGOT_ATTR_HEAD;
  int32_t has_min;
  int32_t has_max;
  double min;
  double max;
} ingot_attr_clamp;
/* MATMUL: bias (third input) and activation are fused post-ops */
typedef struct ingot_attr_matmul {
  INGOT_ATTR_HEAD;
  int32_t has_bias;
  int32_t activation;
} ingot_attr_matmul;
typedef struct ingot_attr_conv2d {
  INGOT_ATTR_HEAD;
  int64_t stride[2];
  int64_t padding[2];
  int64_t dilation[2];
  int64_t groups;
  int32_t has_bias;
  int32_t activation;
} ingot_attr_conv2d;
typedef struct ingot_attr_pool2d {
  INGOT_ATTR_HEAD;
  int64_t kernel[2];
  int64_t stride[2];
  int64_t padding[2];
  int32_t ceil_mode;
  int32_t count_include_pad; /* avg pooling only */
  /* ABI 1.2, MAX_POOL2D: nonzero when nobody reads the indices output (inference); a backend
   * may leave it unwritten. Backends of ABI 1.1 read a shorter struct and ignore it. */
  int32_t indices_unused;
} ingot_attr_pool2d;
/* constant padding: pads[2*d] before and pads[2*d+1] after dim d */
typedef struct ingot_attr_pad {
  INGOT_ATTR_HEAD;
  int64_t pads[2 * INGOT_MAX_DIMS];
  double value;
} ingot_attr_pad;
typedef struct ingot_attr_sort {
  INGOT_ATTR_HEAD;
  int32_t axis;
  int32_t descending;
  int32_t stable;
} ingot_attr_sort;
typedef struct ingot_attr_topk {
  INGOT_ATTR_HEAD;
  int32_t axis;
  int32_t largest;
  int64_t k;
  int32_t sorted;
} ingot_attr_topk;
typedef struct ingot_attr_arange { INGOT_ATTR_HEAD; double start; double step; } ingot_attr_arange;
typedef struct ingot_attr_layer_norm {
  INGOT_ATTR_HEAD;
  int32_t normalized_ndim;
  int32_t has_affine;
  double eps;
} ingot_attr_layer_norm;
typedef struct ingot_attr_batch_norm {
  INGOT_ATTR_HEAD;
  int32_t training;
  int32_t has_affine;
  double eps;
  double momentum;
} ingot_attr_batch_norm;
/* torch.optim.SGD semantics; first_step: momentum buffers are initialised to the gradient.
 * With momentum 0 the buffers are never read and core passes 0-size placeholders. */
typedef struct ingot_attr_sgd {
  INGOT_ATTR_HEAD;
  double lr;
  double momentum;
  double dampening;
  double weight_decay;
  int32_t nesterov;
  int32_t first_step;
} ingot_attr_sgd;
/* torch.optim.Adam (decoupled = 0) / AdamW (decoupled = 1); step is the 1-based number of
 * this update (bias corrections 1 - beta^step). Appended in ABI 1.1. */
typedef struct ingot_attr_adam {
  INGOT_ATTR_HEAD;
  double lr;
  double beta1;
  double beta2;
  double eps;
  double weight_decay;
  int64_t step;
  int32_t decoupled;
  int32_t amsgrad;
} ingot_attr_adam;
/* Philox draws: element i uses counter offset + i/4, lane i%4, key seed.
 * UNIFORM: [a, b); BERNOULLI: 1 with probability a; NORMAL: mean a, std b. */
typedef struct ingot_attr_rng {
  INGOT_ATTR_HEAD;
  uint64_t seed;
  uint64_t offset;
  double a;
  double b;
} ingot_attr_rng;

/* ---- execution context (host services for one call) -------------------------------------- */
typedef struct ingot_exec_context {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t num_threads; /* the one thread budget; part of every plan key */
  int32_t reserved;
  void* host;
  /* Scratch memory from core's allocator, valid until the call returns. */
  ingot_status* (*workspace)(void* host, size_t bytes, void** ptr);
  void* stream; /* device backends: the native stream handle, NULL = default */
} ingot_exec_context;

/* ---- backend component ------------------------------------------------------------------- */
/* 1 when `table` (a struct that starts with struct_size) is long enough to hold `field` and the
 * entry is set. Entries appended by a later minor are absent from older tables: read them only
 * through this check; a missing entry means "not supported". */
#define INGOT_TABLE_HAS(table, type, field) \
  ((table)->struct_size >= offsetof(type, field) + sizeof((table)->field) && (table)->field != NULL)

/* A device allocator's counters (bytes unless noted), as core's MemoryStats. Appended in ABI 1.2. */
typedef struct ingot_memory_stats {
  uint32_t struct_size;
  uint32_t abi_minor;
  int64_t allocated;      /* held by live allocations */
  int64_t reserved;       /* allocated + cached: what the allocator holds from the device */
  int64_t peak_allocated; /* high-water mark of allocated since the last reset */
  int64_t allocations;    /* number of alloc calls */
  int64_t cache_hits;     /* alloc calls served from the cache */
} ingot_memory_stats;

typedef struct ingot_plan_cache_stats {
  uint32_t struct_size;
  uint32_t abi_minor;
  int64_t entries;
  int64_t capacity;
  int64_t hits;
  int64_t misses;
} ingot_plan_cache_stats;

typedef struct ingot_backend {
  uint32_t struct_size;
  uint32_t abi_minor;
  void* self;
  const char* name;
  int32_t device_kind;
  int32_t priority; /* higher wins among backends of the same device kind that support an op */

  /* 1 if the backend runs this op for these descriptors (data pointers may be NULL). */
  int (*supports)(void* self, int32_t op, const ingot_tensor_desc* inputs, int32_t n_in,
                  const ingot_tensor_desc* outputs, int32_t n_out, const void* attrs);
  /* Optional: choose an opaque layout for output `index`; leave the desc strided to decline.
   * On success sets layout, layout_handle and nbytes. */
  ingot_status* (*choose_output_layout)(void* self, int32_t op, const ingot_tensor_desc* inputs,
                                        int32_t n_in, ingot_tensor_desc* outputs, int32_t n_out,
                                        int32_t index, const void* attrs);
  ingot_status* (*execute)(void* self, int32_t op, const ingot_tensor_desc* inputs, int32_t n_in,
                           const ingot_tensor_desc* outputs, int32_t n_out, const void* attrs,
                           const ingot_exec_context* ctx);
  /* Opaque layouts: reorder into a strided desc core allocated, and reference counting. */
  ingot_status* (*to_strided)(void* self, const ingot_tensor_desc* src,
                              const ingot_tensor_desc* dst, const ingot_exec_context* ctx);
  void (*layout_retain)(void* self, void* layout_handle);
  void (*layout_release)(void* self, void* layout_handle);
  /* Device memory (NULL for host backends: host memory belongs to core). */
  ingot_status* (*alloc)(void* self, size_t bytes, void** ptr);
  void (*free)(void* self, void* ptr);
  /* Copy between host and this backend's device (sizes in bytes, both contiguous), ordered after
   * the work queued on the compute stream (ctx->stream overrides it). Synchronous for the caller:
   * returns once dst holds the data when dst is host memory, and once src may be reused when src
   * is host memory (pinned or not). copy_async (ABI 1.2) is the variant that does not wait. */
  ingot_status* (*copy)(void* self, void* dst, int32_t dst_device_kind, const void* src,
                        int32_t src_device_kind, size_t bytes, const ingot_exec_context* ctx);
  void (*plan_cache_stats)(void* self, ingot_plan_cache_stats* stats);
  /* Implementation name of the last plan built for `op` (e.g. "brg:avx512_core"), or NULL. */
  const char* (*impl_name)(void* self, int32_t op);
  void (*destroy)(void* self);

  /* ---- appended in ABI 1.2, device backends only; read through INGOT_TABLE_HAS ------------- */
  /* The allocator of device `device_index`: counters, peak reset (peak_allocated = allocated),
   * and empty_cache, which returns cached, unused blocks to the device. */
  ingot_status* (*memory_stats)(void* self, int32_t device_index, ingot_memory_stats* out);
  ingot_status* (*reset_peak_memory_stats)(void* self, int32_t device_index);
  ingot_status* (*empty_cache)(void* self, int32_t device_index);
  /* Page-locked host memory, the source and target of asynchronous copies; freed only by
   * host_free_pinned of the same backend. */
  ingot_status* (*host_alloc_pinned)(void* self, size_t bytes, void** ptr);
  void (*host_free_pinned)(void* self, void* ptr);
  /* As copy, but returns once the copy is queued on the compute stream (ctx->stream overrides):
   * host buffers must stay untouched until synchronize, or an event recorded after the copy,
   * has completed. From or to pageable host memory it may block like copy. */
  ingot_status* (*copy_async)(void* self, void* dst, int32_t dst_device_kind, const void* src,
                              int32_t src_device_kind, size_t bytes, const ingot_exec_context* ctx);
  /* Returns once all work queued on the compute stream of `device_index` has finished. */
  ingot_status* (*synchronize)(void* self, int32_t device_index);
  /* The native handle of the compute stream (cudaStream_t for CUDA), valid for the process, so a
   * communicator plugin (NCCL) can enqueue its work in order with the backend's ops. */
  ingot_status* (*native_stream)(void* self, int32_t device_index, void** stream);
  /* Timing events: record on the compute stream (ctx->stream overrides; ctx may be NULL);
   * elapsed_ms waits for `end` and gives the milliseconds between two recorded events. */
  ingot_status* (*event_create)(void* self, int32_t device_index, void** event);
  ingot_status* (*event_record)(void* self, void* event, const ingot_exec_context* ctx);
  ingot_status* (*event_synchronize)(void* self, void* event);
  ingot_status* (*event_elapsed_ms)(void* self, void* start, void* end, double* ms);
  void (*event_destroy)(void* self, void* event);
} ingot_backend;

/* ---- host API and plugin entry points ---------------------------------------------------- */
typedef enum ingot_log_level {
  INGOT_LOG_DEBUG = 0,
  INGOT_LOG_INFO = 1,
  INGOT_LOG_WARN = 2,
  INGOT_LOG_ERROR = 3
} ingot_log_level;

typedef struct ingot_host_api {
  uint32_t struct_size;
  uint32_t abi_minor;
  void* host;
  void (*log)(void* host, int32_t level, const char* plugin, const char* message);
} ingot_host_api;

#define INGOT_KIND_BACKEND (1u << 0)

typedef struct ingot_plugin_info {
  uint32_t struct_size;
  uint32_t abi_minor;
  uint32_t abi_major;
  uint32_t kinds; /* INGOT_KIND_* bits */
  const char* name;
  const char* version;
  const char* description;
} ingot_plugin_info;

typedef struct ingot_plugin_components {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t n_backends;
  const ingot_backend* const* backends; /* owned by the plugin, valid for the process */
} ingot_plugin_components;

/* Entry points every plugin exports (extern "C"). query has no side effects; probe creates no
 * device context and writes why it cannot run into reason; init builds the components. */
typedef void (*ingot_plugin_query_fn)(ingot_plugin_info* info);
typedef int (*ingot_plugin_probe_fn)(char* reason, size_t reason_size);
typedef ingot_status* (*ingot_plugin_init_fn)(const ingot_host_api* host,
                                              ingot_plugin_components* components);

#define INGOT_PLUGIN_QUERY_SYMBOL "ingot_plugin_query"
#define INGOT_PLUGIN_PROBE_SYMBOL "ingot_plugin_probe"
#define INGOT_PLUGIN_INIT_SYMBOL "ingot_plugin_init"

#ifdef __cplusplus
}
#endif
#endif /* INGOT_PLUGIN_H */
