// AnomalyDetector (train.detect_anomaly): names the first op of a step whose output went NaN or
// inf — in the forward pass with the layer it ran in, in the backward pass with the backward node
// — by checking every floating output of every op the training thread runs (torch's
// autograd.detect_anomaly, for the forward pass too). A debugging mode: each op's outputs are
// read back once, and layers with hooks are not fused.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/nn/module.h"

namespace ingot {
class OpInterceptor;
}

namespace ingot::train {

struct AnomalyState;

class AnomalyDetector {
 public:
  /// Starts watching the ops this thread runs, and the layers of `model` they run in.
  explicit AnomalyDetector(nn::Module& model);
  /// Stops watching (the interceptor and the layer hooks are removed).
  ~AnomalyDetector();
  AnomalyDetector(const AnomalyDetector&) = delete;
  AnomalyDetector& operator=(const AnomalyDetector&) = delete;

  /// Forgets what was found: call it when a step (an accumulation group) begins.
  void clear();
  /// "" while every output was finite since clear(); else what the first non-finite one was, e.g.
  /// "op LOG (forward, in layer 'head' Linear) made NaN from finite inputs".
  std::string first() const;

 private:
  std::shared_ptr<AnomalyState> state_;
  std::shared_ptr<OpInterceptor> interceptor_;
  std::vector<std::pair<nn::Module*, uint64_t>> hooks_;
};

}  // namespace ingot::train
