// The AdamW options a torch golden fixture records in its "optimizer" metadata (JSON: lr, betas,
// eps, weight_decay), for the transformer parity tests.
#pragma once

#include <nlohmann/json.hpp>

#include "ingot/optim/adam.h"

namespace ingot::test {

inline optim::AdamWOptions adamw_options(const nlohmann::json& opt) {
  optim::AdamWOptions o;
  o.lr = opt.at("lr");
  o.beta1 = opt.at("betas")[0];
  o.beta2 = opt.at("betas")[1];
  o.eps = opt.at("eps");
  o.weight_decay = opt.at("weight_decay");
  return o;
}

}  // namespace ingot::test
