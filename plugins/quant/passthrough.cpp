// Pass-through layers for u8 chains: matched on the exact types (a subclass may do more).
#include "passthrough.h"

#include <map>
#include <mutex>
#include <typeinfo>

#include "ingot/nn/dropout.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/pooling.h"
#include "ingot/ops/pool.h"

namespace ingot::quant {

bool passes_u8(const nn::Module& m, bool u8_max_pool) {
  const std::type_info& t = typeid(m);
  if (t == typeid(Identity) || t == typeid(nn::Flatten)) return true;
  if (t == typeid(nn::Dropout)) return !m.is_training();
  return t == typeid(nn::MaxPool2d) && u8_max_pool;
}

bool device_pools_u8(Device device) {
  static std::mutex mu;
  static std::map<std::string, bool> known;
  std::lock_guard<std::mutex> lock(mu);
  const auto it = known.find(device.str());
  if (it != known.end()) return it->second;
  bool ok = true;
  try {
    Pool2dParams p;
    p.kernel = {2, 2};
    max_pool2d_values(Tensor::empty(Shape{1, 1, 2, 2}, DType::U8, device), p);
  } catch (const Error&) {
    ok = false;
  }
  known.emplace(device.str(), ok);
  return ok;
}

}  // namespace ingot::quant
