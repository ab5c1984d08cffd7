// Pooling cases: MAX_POOL2D (only y is compared: the workspace is the backend's business),
// MAX_POOL2D_BWD (fed by each backend's own forward), AVG_POOL2D and AVG_POOL2D_BWD.
// Max-pool inputs hold distinct values so that the arg-max of every window is unique.
#include "op_case.h"

namespace ingot::conformance {

namespace {

struct Pool {
  Shape x;
  int64_t kernel[2], stride[2], padding[2];
  bool ceil_mode = false;
  bool include_pad = true;
  const char* note = "";
};

// PyTorch's rule: ceil mode may add a window, but never one that starts in the right padding.
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  const int64_t span = in + 2 * p - k;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

ingot_attr_pool2d pool_attr(const Pool& p) {
  auto a = make_attr<ingot_attr_pool2d>();
  for (int i = 0; i < 2; ++i) a.kernel[i] = p.kernel[i], a.stride[i] = p.stride[i], a.padding[i] = p.padding[i];
  a.ceil_mode = p.ceil_mode ? 1 : 0;
  a.count_include_pad = p.include_pad ? 1 : 0;
  return a;
}

// Distinct values over each (n, c) plane; a transposed view (H and W swapped in memory) on request.
Tensor pool_input(const Shape& x, DType dt, uint64_t seed, bool transposed) {
  const Shape flat{x[0], x[1], x[2] * x[3]};
  if (!transposed) return distinct_along(flat, dt, seed, 2).view(x);
  const Shape swapped{x[0], x[1], x[3], x[2]};
  return distinct_along({x[0], x[1], x[2] * x[3]}, dt, seed, 2).view(swapped).transpose(2, 3);
}

}  // namespace

CaseList pool_cases(OpKind op) {
  const bool is_max = op == INGOT_OP_MAX_POOL2D || op == INGOT_OP_MAX_POOL2D_BWD;
  const bool backward = op == INGOT_OP_MAX_POOL2D_BWD || op == INGOT_OP_AVG_POOL2D_BWD;
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    std::vector<Pool> pools = {{{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, false, true, "2x2 stride 2"},
                               {{1, 2, 7, 9}, {3, 3}, {2, 2}, {1, 1}, false, true, "3x3 stride 2 pad 1"},
                               {{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, true, true, "ceil mode"},
                               {{1, 3, 6, 5}, {3, 2}, {2, 1}, {1, 0}, false, true, "3x2 kernel, stride (2,1)"},
                               {{2, 1, 5, 5}, {3, 3}, {1, 1}, {1, 1}, false, false, "pad excluded from the count"},
                               {{1, 2, 8, 8}, {3, 3}, {3, 3}, {1, 1}, true, false, "ceil mode, pad excluded"},
                               {{1, 17, 4, 4}, {2, 2}, {2, 2}, {0, 0}, false, true, "17 channels"},
                               {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0}, false, true, "1x1"}};
    for (size_t i = 0; i < pools.size(); ++i) {
      const Pool& p = pools[i];
      if (is_max && !p.include_pad) continue;  // count_include_pad is avg-pool only
      const Shape y{p.x[0], p.x[1], pool_out(p.x[2], p.kernel[0], p.stride[0], p.padding[0], p.ceil_mode),
                    pool_out(p.x[3], p.kernel[1], p.stride[1], p.padding[1], p.ceil_mode)};
      // the second forward case reads x through a transposed view
      const bool transposed = i == 1 && !backward;
      OpCase c = new_case(op, std::string(p.note) + (transposed ? ", transposed x" : ""));
      c.set_attr(pool_attr(p));
      c.reduction = p.kernel[0] * p.kernel[1];
      const Tensor x = is_max
                           ? pool_input(p.x, dt, next_seed(op), transposed)
                           : make_input(p.x, dt, next_seed(op), transposed ? Layout::Transposed : Layout::Contiguous);
      if (op == INGOT_OP_MAX_POOL2D) {
        c.inputs = {x};
        c.outputs = {{y, dt}, {y, DType::I64}};
        c.compared_outputs = {0};
      } else if (op == INGOT_OP_AVG_POOL2D) {
        c.inputs = {x};
        c.outputs = {{y, dt}};
      } else if (op == INGOT_OP_MAX_POOL2D_BWD) {  // (grad_y, x); the runner adds the workspace
        c.inputs = {make_input(y, dt, next_seed(op)), x};
        c.outputs = {{p.x, dt}};
        c.pool_workspace = true;
      } else {  // AVG_POOL2D_BWD: (grad_y) -> grad_x
        c.inputs = {make_input(y, dt, next_seed(op))};
        c.outputs = {{p.x, dt}};
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace ingot::conformance
