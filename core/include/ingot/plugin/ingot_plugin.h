/* Ingot plugin ABI 2.0: the plain C99 boundary between core and run-time loaded plugins.
 *
 * Rules: every struct starts with struct_size and abi_minor; tables are append-only within a
 * major version (read entries of a later minor only through INGOT_TABLE_HAS); the major version
 * must match exactly; whoever allocates frees; no C++ type and no exception crosses this boundary.
 *
 * A plugin exports query / probe / init (bottom of this file). init hands back an array of
 * components, each tagged by kind:
 *   - INGOT_COMPONENT_BACKEND: an ingot_backend = name + priority + a device table (memory,
 *     copies, streams, events of every device it serves) + a compute table (ops);
 *   - INGOT_COMPONENT_COMMUNICATOR: an ingot_communicator (collectives between ranks, bootstrapped
 *     over the host's key-value store).
 * Devices are addressed by kind and index everywhere: every device entry takes a device_index,
 * and execute finds its device in the descriptors' device_index. */
#ifndef INGOT_PLUGIN_H
#define INGOT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INGOT_ABI_MAJOR 2
#define INGOT_ABI_MINOR 8
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

/* The name of `dtype` as torch prints it ("float32", "bfloat16", ...), or its short form ("f32",
 * "bf16", ...) when short_form != 0; NULL for a number outside this header's dtypes. */
static inline const char* ingot_dtype_name(int32_t dtype, int short_form) {
  static const char* const names[INGOT_DTYPE_COUNT][2] = {
      {"float32", "f32"}, {"float64", "f64"}, {"float16", "f16"}, {"bfloat16", "bf16"}, {"int8", "i8"},
      {"uint8", "u8"},    {"int32", "i32"},   {"int64", "i64"},   {"bool", "bool"},
  };
  return (dtype >= 0 && dtype < (int32_t)INGOT_DTYPE_COUNT) ? names[dtype][short_form ? 1 : 0] : NULL;
}

/* dtype sets used by the op table's dtypes column (bit i = dtype i) */
#define INGOT_DTYPES_FLOAT ((1u << INGOT_F32) | (1u << INGOT_F64) | (1u << INGOT_F16) | (1u << INGOT_BF16))
#define INGOT_DTYPES_INT ((1u << INGOT_I8) | (1u << INGOT_U8) | (1u << INGOT_I32) | (1u << INGOT_I64))
#define INGOT_DTYPES_NUM (INGOT_DTYPES_FLOAT | INGOT_DTYPES_INT)
#define INGOT_DTYPES_ANY (INGOT_DTYPES_NUM | (1u << INGOT_BOOL))
/* the dtypes of a quantized tensor (ABI 2.2), and the floating ones plus those (max pooling) */
#define INGOT_DTYPES_Q8 ((1u << INGOT_I8) | (1u << INGOT_U8))
#define INGOT_DTYPES_FLOAT_Q8 (INGOT_DTYPES_FLOAT | INGOT_DTYPES_Q8)

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
  INGOT_ERR_NO_DEVICE = 5,
  INGOT_ERR_TIMEOUT = 6 /* a key-value store wait or a collective ran out of time */
} ingot_status_code;

/* NULL means success. A non-NULL status is released by its `release`, set by its creator. */
typedef struct ingot_status {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t code;
  const char* message;
  void (*release)(struct ingot_status* self);
} ingot_status;

/* ---- op kinds, families and attributes ------------------------------------------------- */
typedef enum ingot_op_kind {
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) INGOT_OP_##ENUM,
#include "ingot/plugin/op_table.def"
#undef INGOT_OP
  INGOT_OP_COUNT
} ingot_op_kind;

/* The kernel family of an op (the op table's family column). Backends route an op by its family,
 * never by ranges of op numbers, and each family's kernels check the op they got: an op appended
 * to the table later reaches the right family, or is declined, never misrouted. */
typedef enum ingot_op_family {
  INGOT_FAMILY_UNKNOWN = 0,            /* not an op of the table this plugin was built with */
  INGOT_FAMILY_ELEMENTWISE_UNARY = 1,  /* one input, same shape: NEG .. LOGICAL_NOT */
  INGOT_FAMILY_ELEMENTWISE_BINARY = 2, /* broadcasting arithmetic; activation gradients, ADD_RELU(_BWD) */
  INGOT_FAMILY_COMPARISON = 3,         /* comparisons and logical AND / OR (bool output) */
  INGOT_FAMILY_SELECT = 4,             /* WHERE */
  INGOT_FAMILY_REDUCTION = 5,          /* SUM MEAN MAX MIN (to the output's shape), ARGMAX */
  INGOT_FAMILY_MATMUL = 6,
  INGOT_FAMILY_CONV = 7,               /* convolutions and their backward ops */
  INGOT_FAMILY_POOL = 8,               /* pooling and its backward ops */
  INGOT_FAMILY_INDEX = 9,              /* CONCAT PAD GATHER INDEX_SELECT SCATTER_ADD */
  INGOT_FAMILY_SORT = 10,              /* SORT TOPK */
  INGOT_FAMILY_CREATION = 11,          /* ARANGE FILL (no inputs) */
  INGOT_FAMILY_COPY = 12,              /* COPY CAST */
  INGOT_FAMILY_SOFTMAX = 13,           /* softmax, log-softmax and their backward ops */
  INGOT_FAMILY_NORM = 14,              /* layer and batch normalisation, forward and backward */
  INGOT_FAMILY_OPTIMIZER = 15,         /* multi-tensor updates and GLOBAL_NORM */
  INGOT_FAMILY_RANDOM = 16,            /* Philox draws and DROPOUT */
  INGOT_FAMILY_QUANTIZED = 17,         /* QUANTIZE DEQUANTIZE QLINEAR QCONV2D (ABI 2.2) */
  INGOT_FAMILY_ATTENTION = 18,         /* SCALED_DOT_PRODUCT_ATTENTION and its backward (ABI 2.4) */
  INGOT_FAMILY_LOSS = 19,              /* fused CROSS_ENTROPY and its backward (ABI 2.4) */
  INGOT_FAMILY_COUNT = 20
} ingot_op_family;

/* The family of `op`; INGOT_FAMILY_UNKNOWN for a number outside this header's op table. */
static inline ingot_op_family ingot_op_family_of(int32_t op) {
  static const unsigned char families[INGOT_OP_COUNT] = {
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) (unsigned char)INGOT_FAMILY_##family,
#include "ingot/plugin/op_table.def"
#undef INGOT_OP
  };
  return (op >= 0 && op < (int32_t)INGOT_OP_COUNT) ? (ingot_op_family)families[op] : INGOT_FAMILY_UNKNOWN;
}

typedef enum ingot_activation {
  INGOT_ACT_NONE = 0,
  INGOT_ACT_RELU = 1,
  INGOT_ACT_GELU = 2,      /* erf form */
  INGOT_ACT_GELU_TANH = 3, /* tanh form (ABI 2.4) */
  INGOT_ACT_RELU6 = 4      /* min(max(x, 0), 6), MobileNet's (ABI 2.8) */
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
/* How a convolution may compute (ABI 2.5): DIRECT, what eager runs; WINOGRAD lets a backend that
 * has a Winograd kernel for the call use it (fewer multiplications, other rounding: not the bits
 * of DIRECT), and one that has none compute as DIRECT. A compiled step's conv_algorithm pass sets
 * it where measuring shows the kernel faster. */
typedef enum ingot_conv_algorithm {
  INGOT_CONV_ALGO_DIRECT = 0,
  INGOT_CONV_ALGO_WINOGRAD = 1
} ingot_conv_algorithm;
typedef struct ingot_attr_conv2d {
  INGOT_ATTR_HEAD;
  int64_t stride[2];
  int64_t padding[2];
  int64_t dilation[2];
  int64_t groups;
  int32_t has_bias;
  int32_t activation;
  int32_t algorithm; /* ingot_conv_algorithm (ABI 2.5; absent from older structs: DIRECT) */
} ingot_attr_conv2d;

/* The convolution algorithm of `a`: DIRECT when its struct predates the field. */
static inline int32_t ingot_conv_algorithm_of(const ingot_attr_conv2d* a) {
  return a != NULL && a->struct_size >= offsetof(ingot_attr_conv2d, algorithm) + sizeof(int32_t) ? a->algorithm
                                                                                              : INGOT_CONV_ALGO_DIRECT;
}
typedef struct ingot_attr_pool2d {
  INGOT_ATTR_HEAD;
  int64_t kernel[2];
  int64_t stride[2];
  int64_t padding[2];
  int32_t ceil_mode;
  int32_t count_include_pad; /* avg pooling only */
  /* MAX_POOL2D: nonzero when nobody reads the indices output (inference); a backend may leave
   * it unwritten. */
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
 * this update (bias corrections 1 - beta^step). */
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

/* QUANTIZE / DEQUANTIZE (ABI 2.2): the channel axis of per-channel scale and zero point (ignored
 * when they hold 1 element) and the range q is clamped to (within the dtype's; QUANTIZE only). */
typedef struct ingot_attr_quantize {
  INGOT_ATTR_HEAD;
  int32_t axis;
  int32_t quant_min;
  int32_t quant_max;
} ingot_attr_quantize;

/* SCALED_DOT_PRODUCT_ATTENTION and its backward (ABI 2.4). scale multiplies q . k (core fills
 * in torch's default 1 / sqrt(D)); dropout on the probabilities draws from (seed, offset).
 * causal: 0 none; 1 upper-left, torch's is_causal (key j visible to query i iff j <= i); 2
 * lower-right (j <= i + Tk - Tq: the queries are the last Tq positions, as a KV cache decodes).
 * mask: 0 none; 1 a bool mask (true = attend); 2 an additive mask in q's dtype; it is the last input. */
typedef struct ingot_attr_attention {
  INGOT_ATTR_HEAD;
  double scale;
  double dropout_p;
  uint64_t seed;
  uint64_t offset;
  int32_t causal;
  int32_t mask;
} ingot_attr_attention;

/* CROSS_ENTROPY and its backward (ABI 2.4): torch.nn.functional.cross_entropy's ignore_index and
 * label_smoothing, per row (the reduction is core's). */
typedef struct ingot_attr_cross_entropy {
  INGOT_ATTR_HEAD;
  int64_t ignore_index;
  double label_smoothing;
} ingot_attr_cross_entropy;

/* ---- execution context (host services for one call) -------------------------------------- */
typedef struct ingot_exec_context {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t num_threads; /* the one thread budget; part of every plan key */
  int32_t reserved;
  void* host;
  /* Scratch memory from core's allocator, valid until the call returns. */
  ingot_status* (*workspace)(void* host, size_t bytes, void** ptr);
  void* stream; /* device backends: the native stream handle, NULL = the device's compute stream */
} ingot_exec_context;

/* 1 when `table` (a struct that starts with struct_size) is long enough to hold `field` and the
 * entry is set. Entries appended by a later minor are absent from older tables: read them only
 * through this check; a missing entry means "not supported". */
#define INGOT_TABLE_HAS(table, type, field) \
  ((table)->struct_size >= offsetof(type, field) + sizeof((table)->field) && (table)->field != NULL)

/* A device allocator's counters (bytes unless noted), as core's MemoryStats. */
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

/* ---- backend component: device table -------------------------------------------------------
 * The devices a backend serves: device_count devices of device_kind, numbered 0..count-1. Every
 * entry takes the index of the device it acts on and returns an error status for an index out
 * of range. A host backend (device kind CPU) has device_count 1 and leaves every other entry
 * NULL: host memory belongs to core. A device backend sets device_count, alloc, free and copy;
 * the entries after them are optional (NULL = not supported; core says so in one line). */
typedef struct ingot_device_table {
  uint32_t struct_size;
  uint32_t abi_minor;
  void* self;
  int32_t device_kind; /* ingot_device_kind */
  int32_t reserved;
  /* Number of devices served (visible GPUs for CUDA); constant for the process. */
  int32_t (*device_count)(void* self);
  /* Device memory of device_index; freed only by free with the same index. */
  ingot_status* (*alloc)(void* self, int32_t device_index, size_t bytes, void** ptr);
  void (*free)(void* self, int32_t device_index, void* ptr);
  /* Copy between host memory and device device_index, or within that device (sizes in bytes,
   * both contiguous), ordered after the work queued on its compute stream (ctx->stream
   * overrides it; ctx may be NULL). Synchronous for the caller: returns once dst holds the data
   * when dst is host memory, and once src may be reused when src is host memory. */
  ingot_status* (*copy)(void* self, int32_t device_index, void* dst, int32_t dst_device_kind, const void* src,
                        int32_t src_device_kind, size_t bytes, const ingot_exec_context* ctx);
  /* As copy, but returns once the copy is queued: host buffers must stay untouched until
   * synchronize, or an event recorded after the copy, has completed. From or to pageable host
   * memory it may block like copy. */
  ingot_status* (*copy_async)(void* self, int32_t device_index, void* dst, int32_t dst_device_kind,
                              const void* src, int32_t src_device_kind, size_t bytes,
                              const ingot_exec_context* ctx);
  /* Page-locked host memory, the source and target of asynchronous copies to any device of the
   * backend; freed only by host_free_pinned of the same backend. */
  ingot_status* (*host_alloc_pinned)(void* self, int32_t device_index, size_t bytes, void** ptr);
  void (*host_free_pinned)(void* self, int32_t device_index, void* ptr);
  /* Returns once all work queued on the compute stream of device_index has finished. */
  ingot_status* (*synchronize)(void* self, int32_t device_index);
  /* The native handle of the device's compute stream (cudaStream_t for CUDA), valid for the
   * process, so a communicator can enqueue its work in order with the backend's ops. */
  ingot_status* (*native_stream)(void* self, int32_t device_index, void** stream);
  /* Timing events of one device: record on its compute stream (ctx->stream overrides; ctx may be
   * NULL); elapsed_ms waits for `end` and gives the milliseconds between two recorded events. */
  ingot_status* (*event_create)(void* self, int32_t device_index, void** event);
  ingot_status* (*event_record)(void* self, int32_t device_index, void* event, const ingot_exec_context* ctx);
  ingot_status* (*event_synchronize)(void* self, int32_t device_index, void* event);
  ingot_status* (*event_elapsed_ms)(void* self, int32_t device_index, void* start, void* end, double* ms);
  void (*event_destroy)(void* self, int32_t device_index, void* event);
  /* The allocator of device_index: counters, peak reset (peak_allocated = allocated), and
   * empty_cache, which returns cached, unused blocks to the device. */
  ingot_status* (*memory_stats)(void* self, int32_t device_index, ingot_memory_stats* out);
  ingot_status* (*reset_peak_memory_stats)(void* self, int32_t device_index);
  ingot_status* (*empty_cache)(void* self, int32_t device_index);
  /* Side streams of device_index: work queued on one (ctx->stream = its handle for copy_async and
   * event_record) runs concurrently with the compute stream, so a host -> device copy can overlap
   * compute. stream_wait_event makes the work queued later on `stream` (NULL: the compute stream)
   * wait for `event`, recorded on any stream of the device. */
  ingot_status* (*stream_create)(void* self, int32_t device_index, void** stream);
  void (*stream_destroy)(void* self, int32_t device_index, void* stream);
  ingot_status* (*stream_wait_event)(void* self, int32_t device_index, void* stream, void* event);
  /* Bytes of device_index's memory: in all, and free for new allocations now (cudaMemGetInfo):
   * what the pipeline checks its memory estimate against before it allocates. */
  ingot_status* (*memory_info)(void* self, int32_t device_index, int64_t* free_bytes, int64_t* total_bytes);
} ingot_device_table;

/* ---- backend component: compute table ------------------------------------------------------
 * The ops a backend runs. The device of a call is the descriptors' (device_kind, device_index);
 * a backend declines (supports = 0) a call whose tensors are on a device it does not serve. */
typedef struct ingot_compute_table {
  uint32_t struct_size;
  uint32_t abi_minor;
  void* self;
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
  ingot_status* (*to_strided)(void* self, const ingot_tensor_desc* src, const ingot_tensor_desc* dst,
                              const ingot_exec_context* ctx);
  void (*layout_retain)(void* self, void* layout_handle);
  void (*layout_release)(void* self, void* layout_handle);
  void (*plan_cache_stats)(void* self, ingot_plan_cache_stats* stats);
  /* Implementation name of the last plan built for `op` (e.g. "brg:avx512_core"), or NULL. */
  const char* (*impl_name)(void* self, int32_t op);
  /* Optional (ABI 2.5): the opaque layout input `index` of this call runs fastest in (a matmul's
   * packed weights), for a tensor core packs once and reuses (a compiled graph's frozen weights):
   * sets layout, layout_handle and nbytes of *layout (a copy of inputs[index]); leaves it strided
   * to decline. The call must then accept inputs[index] in that layout. */
  ingot_status* (*choose_input_layout)(void* self, int32_t op, const ingot_tensor_desc* inputs, int32_t n_in,
                                       const ingot_tensor_desc* outputs, int32_t n_out, int32_t index,
                                       const void* attrs, ingot_tensor_desc* layout);
  /* Optional (ABI 2.5): reorder the strided `src` into `dst`, whose opaque layout this backend made. */
  ingot_status* (*from_strided)(void* self, const ingot_tensor_desc* src, const ingot_tensor_desc* dst,
                                const ingot_exec_context* ctx);
  /* Optional (ABI 2.6): 1 if this call computes the same result when outputs[out_index] is
   * written over inputs[in_index]: the same memory, the same bytes and layout (a compiled graph's
   * memory plan then gives both one block when the input is read last by this call). */
  int (*runs_in_place)(void* self, int32_t op, const ingot_tensor_desc* inputs, int32_t n_in,
                       const ingot_tensor_desc* outputs, int32_t n_out, int32_t out_index, int32_t in_index,
                       const void* attrs);
} ingot_compute_table;

/* A backend: both tables, valid for the process (core never destroys a backend). */
typedef struct ingot_backend {
  uint32_t struct_size;
  uint32_t abi_minor;
  const char* name;
  int32_t priority; /* higher wins among backends of the same device kind that support an op */
  int32_t reserved;
  const ingot_device_table* device;
  const ingot_compute_table* compute;
} ingot_backend;

/* ---- communicator component ----------------------------------------------------------------- */
typedef enum ingot_reduce_op {
  INGOT_REDUCE_SUM = 0,
  INGOT_REDUCE_AVG = 1, /* sum / world_size (integers truncate) */
  INGOT_REDUCE_MAX = 2,
  INGOT_REDUCE_MIN = 3
} ingot_reduce_op;

/* Collectives between world_size ranks (threads or processes), one communicator per rank. All
 * ranks call the same collectives in the same order. Tensors are contiguous, on the device the
 * communicator was created for, and input and output have one dtype; stream is the native stream
 * to order the work on (NULL = the device's compute stream, or synchronous on the host). An
 * output may be the input (in place) where its size allows. */
typedef struct ingot_communicator {
  uint32_t struct_size;
  uint32_t abi_minor;
  void* self;
  const char* name;
  int32_t device_kind; /* the kind of device whose tensors it exchanges */
  int32_t reserved;
  /* Joins rank `rank` of `world_size` through kv_store (a handle of the host API's store), for
   * tensors on (device_kind, device_index); blocks until the group is formed or fails. */
  ingot_status* (*create)(void* self, int32_t rank, int32_t world_size, void* kv_store, int32_t device_kind,
                          int32_t device_index, void** comm);
  /* output = reduce(input of every rank); same shape. */
  ingot_status* (*all_reduce)(void* self, void* comm, const ingot_tensor_desc* input,
                              const ingot_tensor_desc* output, int32_t reduce_op, void* stream);
  /* output = input of rank `root`; same shape. */
  ingot_status* (*broadcast)(void* self, void* comm, const ingot_tensor_desc* input,
                             const ingot_tensor_desc* output, int32_t root, void* stream);
  /* output = the inputs of ranks 0..world_size-1 one after the other (world_size x numel). */
  ingot_status* (*all_gather)(void* self, void* comm, const ingot_tensor_desc* input,
                              const ingot_tensor_desc* output, void* stream);
  /* input holds world_size chunks of numel(output); rank r gets the reduction of every rank's chunk r. */
  ingot_status* (*reduce_scatter)(void* self, void* comm, const ingot_tensor_desc* input,
                                  const ingot_tensor_desc* output, int32_t reduce_op, void* stream);
  /* Returns once every rank has called barrier. */
  ingot_status* (*barrier)(void* self, void* comm, void* stream);
  void (*destroy)(void* self, void* comm);
  /* Point to point (ABI 2.3; absent from older tables, which core then reports as unable to
   * send): send gives `input` to rank `peer`, which receives it into an `output` of the same size
   * and dtype with recv. Messages between two ranks arrive in the order they were sent. send
   * returns once input may be reused (or, on a device stream, once the work is queued). */
  ingot_status* (*send)(void* self, void* comm, const ingot_tensor_desc* input, int32_t peer, void* stream);
  ingot_status* (*recv)(void* self, void* comm, const ingot_tensor_desc* output, int32_t peer, void* stream);
} ingot_communicator;

/* ---- host API and plugin entry points ---------------------------------------------------- */
typedef enum ingot_log_level {
  INGOT_LOG_DEBUG = 0,
  INGOT_LOG_INFO = 1,
  INGOT_LOG_WARN = 2,
  INGOT_LOG_ERROR = 3
} ingot_log_level;

/* Services core offers a plugin; valid for the process. Statuses it returns are released by the
 * plugin through their release pointer. The key-value store is what a group of ranks bootstraps
 * over (unique ids, addresses): core passes its opaque handle to communicator create, and the
 * plugin uses it only through kv_set / kv_get. One store serves one communicator group. */
typedef struct ingot_host_api {
  uint32_t struct_size;
  uint32_t abi_minor;
  void* host;
  void (*log)(void* host, int32_t level, const char* plugin, const char* message);
  /* Stores `size` bytes under `key` (replacing an earlier value) and wakes waiting readers. */
  ingot_status* (*kv_set)(void* host, void* kv_store, const char* key, const void* value, size_t size);
  /* Waits up to timeout_ms (< 0: without limit) until `key` exists, then copies
   * min(size, capacity) bytes of its value into buffer and sets *size to the value's size (call
   * again with a larger buffer when it exceeds capacity). INGOT_ERR_TIMEOUT when time runs out. */
  ingot_status* (*kv_get)(void* host, void* kv_store, const char* key, int64_t timeout_ms, void* buffer,
                          size_t capacity, size_t* size);
} ingot_host_api;

typedef enum ingot_component_kind {
  INGOT_COMPONENT_BACKEND = 0,     /* table: const ingot_backend* */
  INGOT_COMPONENT_COMMUNICATOR = 1 /* table: const ingot_communicator* */
} ingot_component_kind;

/* Bits of ingot_plugin_info.kinds: the component kinds a plugin's init may hand back. */
#define INGOT_KIND_BACKEND (1u << INGOT_COMPONENT_BACKEND)
#define INGOT_KIND_COMMUNICATOR (1u << INGOT_COMPONENT_COMMUNICATOR)

typedef struct ingot_plugin_info {
  uint32_t struct_size;
  uint32_t abi_minor;
  uint32_t abi_major;
  uint32_t kinds; /* INGOT_KIND_* bits */
  const char* name;
  const char* version;
  const char* description;
} ingot_plugin_info;

/* One component: `table` points to the struct its kind names. */
typedef struct ingot_component {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t kind; /* ingot_component_kind */
  int32_t reserved;
  const void* table;
} ingot_component;

typedef struct ingot_plugin_components {
  uint32_t struct_size;
  uint32_t abi_minor;
  int32_t n_components;
  int32_t reserved;
  const ingot_component* components; /* owned by the plugin, valid for the process */
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
