// Comparisons (EQ NE LT LE GT GE) and logical ops (LOGICAL_AND LOGICAL_OR), which write bool,
// and WHERE(cond, a, b); all broadcast their inputs to the output's shape.
#include <cstring>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

template <class C>
bool compare(int32_t op, C a, C b) {
  switch (op) {
    case INGOT_OP_EQ:
      return a == b;
    case INGOT_OP_NE:
      return a != b;
    case INGOT_OP_LT:
      return a < b;
    case INGOT_OP_LE:
      return a <= b;
    case INGOT_OP_GT:
      return a > b;
    case INGOT_OP_GE:
      return a >= b;
    default:
      fail("{}: not a comparison", op_name(op));
  }
}

void run_logical(const sdk::OpCall& c) {
  const ingot_tensor_desc& out = c.out[0];
  NdIter it(out);
  const int o = it.add(out.strides);
  const int ia = it.add_broadcast(c.in[0], c.op);
  const int ib = it.add_broadcast(c.in[1], c.op);
  const void* a = sdk::data_ptr(c.in[0]);
  const void* b = sdk::data_ptr(c.in[1]);
  void* dst = sdk::data_ptr(out);
  for (; !it.done(); it.next()) {
    const bool x = load_as<bool>(a, c.in[0].dtype, it[ia]);
    const bool y = load_as<bool>(b, c.in[1].dtype, it[ib]);
    store_as<bool>(dst, out.dtype, it[o], c.op == INGOT_OP_LOGICAL_AND ? (x && y) : (x || y));
  }
}

}  // namespace

void run_compare(const sdk::OpCall& c) {
  expect_arity(c, 2, 1);
  if (c.op == INGOT_OP_LOGICAL_AND || c.op == INGOT_OP_LOGICAL_OR) return run_logical(c);
  const ingot_tensor_desc& out = c.out[0];
  expect_dtype(c, c.in[1], c.in[0].dtype, "input 1");
  NdIter it(out);
  const int o = it.add(out.strides);
  const int ia = it.add_broadcast(c.in[0], c.op);
  const int ib = it.add_broadcast(c.in[1], c.op);
  void* dst = sdk::data_ptr(out);
  visit_any(c, c.in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* a = sdk::data_ptr<const T>(c.in[0]);
    const T* b = sdk::data_ptr<const T>(c.in[1]);
    for (; !it.done(); it.next()) {
      store_as<bool>(dst, out.dtype, it[o], compare<C>(c.op, convert<C>(a[it[ia]]), convert<C>(b[it[ib]])));
    }
  });
}

void run_where(const sdk::OpCall& c) {
  expect_arity(c, 3, 1);
  const ingot_tensor_desc& out = c.out[0];
  expect_dtype(c, c.in[1], out.dtype, "input 1");
  expect_dtype(c, c.in[2], out.dtype, "input 2");
  NdIter it(out);
  const int o = it.add(out.strides);
  const int ic = it.add_broadcast(c.in[0], c.op);
  const int ia = it.add_broadcast(c.in[1], c.op);
  const int ib = it.add_broadcast(c.in[2], c.op);
  const void* cond = sdk::data_ptr(c.in[0]);
  const int64_t size = sdk::dtype_size(out.dtype);
  const char* a = sdk::data_ptr<const char>(c.in[1]);
  const char* b = sdk::data_ptr<const char>(c.in[2]);
  char* dst = sdk::data_ptr<char>(out);
  for (; !it.done(); it.next()) {
    const char* src = load_as<bool>(cond, c.in[0].dtype, it[ic]) ? a + it[ia] * size : b + it[ib] * size;
    std::memcpy(dst + it[o] * size, src, static_cast<size_t>(size));
  }
}

}  // namespace ingot::reference
