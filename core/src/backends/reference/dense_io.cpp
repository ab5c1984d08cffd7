// Dense double buffers: strided tensor <-> row-major std::vector<double> (see dense_io.h).
#include "backends/reference/dense_io.h"

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

std::vector<double> read_f64(const ingot_tensor_desc& d) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(sdk::numel(d)));
  const void* base = sdk::data_ptr(d);
  for (NdIter it(d); !it.done(); it.next()) {
    values.push_back(load_as<double>(base, d.dtype, offset_of(d, it.index())));
  }
  return values;
}

void write_f64(const ingot_tensor_desc& d, const std::vector<double>& values) {
  if (static_cast<int64_t>(values.size()) != sdk::numel(d)) {
    fail("reference: writing {} values into a tensor of shape {}", values.size(), shape_str(d));
  }
  void* base = sdk::data_ptr(d);
  size_t i = 0;
  for (NdIter it(d); !it.done(); it.next()) store_as<double>(base, d.dtype, offset_of(d, it.index()), values[i++]);
}

void dense_strides(const ingot_tensor_desc& d, int64_t* strides) {
  int64_t s = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    strides[i] = s;
    s *= d.shape[i];
  }
}

}  // namespace ingot::reference
