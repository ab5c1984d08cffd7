// FILL on f32 and bf16 as an OpenMP loop: the zeros every slice and scatter gradient starts from
// (oneDNN has no fill primitive; the reference's single thread was 5% of a GPT step). Dense
// outputs only; the value is rounded to the dtype as the reference rounds it.
#include <omp.h>

#include <algorithm>

#include "bf16.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_FILL; }

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  if (c.n_in != 0 || c.n_out != 1) return false;
  const ingot_tensor_desc& y = c.out[0];
  return (y.dtype == INGOT_F32 || y.dtype == INGOT_BF16) && y.layout == INGOT_LAYOUT_STRIDED && sdk::is_contiguous(y);
}

template <class T>
void fill(T* out, int64_t n, T value) {
  const bool parallel = n >= Exec::kSerialGrain && omp_get_max_threads() > 1;
#pragma omp parallel if (parallel)
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    std::fill(out + begin, out + end, value);
  }
}

void execute(const sdk::OpCall& c, Exec&) {
  const double v = sdk::attr<ingot_attr_scalar>(c.attrs).value;
  const int64_t n = sdk::numel(c.out[0]);
  if (c.out[0].dtype == INGOT_BF16)
    fill(sdk::data_ptr<uint16_t>(c.out[0]), n, float_to_bf16(static_cast<float>(v)));
  else
    fill(sdk::data_ptr<float>(c.out[0]), n, static_cast<float>(v));
}

}  // namespace

const OpFamily& fill_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
