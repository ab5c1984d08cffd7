// SyncBatchNorm: the training forward reduces [sum | sumsq | count] over the group; its backward
// is a recorded function of the input (a view node whose closure reduces sum(dy) and
// sum(dy * xhat)); the affine part is ordinary recorded ops, so weight and bias get local
// gradients like any parameter.
#include "ingot/parallel/sync_batch_norm.h"

#include <optional>
#include <utility>
#include <vector>

#include "autograd/record.h"
#include "ingot/autograd/checkpoint.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/indexing.h"
#include "ingot/ops/norm.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/communicator.h"

namespace ingot::parallel {

namespace {

// Half-precision inputs are normalised in float32 (as torch's kernels accumulate them).
DType compute_dtype(DType x) { return x == DType::F64 ? DType::F64 : DType::F32; }

}  // namespace

SyncBatchNorm::SyncBatchNorm(int64_t num_features, const nn::BatchNormOptions& options, const Communicator* comm)
    : SyncBatchNorm(Shared{}, checked_batch_norm(num_features, options), comm) {}

SyncBatchNorm::SyncBatchNorm(Shared, const nn::BatchNorm2d& bn, const Communicator* comm)
    : Module("SyncBatchNorm"), c_(bn.num_features()), options_(bn.options()), comm_(comm) {
  // The same handles, in BatchNorm2d's registration order (so state_dict's order is kept too).
  if (options_.affine) {
    weight_ = register_parameter("weight", bn.weight());
    bias_ = register_parameter("bias", bn.bias());
  }
  if (options_.track_running_stats) {
    running_mean_ = register_buffer("running_mean", bn.running_mean());
    running_var_ = register_buffer("running_var", bn.running_var());
    num_batches_tracked_ = register_buffer("num_batches_tracked", bn.num_batches_tracked());
  }
  train(bn.is_training());
  set_checkpoint(bn.is_checkpointed());
}

std::shared_ptr<SyncBatchNorm> SyncBatchNorm::from_batch_norm(const nn::BatchNorm2d& bn, const Communicator* comm) {
  return std::shared_ptr<SyncBatchNorm>(new SyncBatchNorm(Shared{}, bn, comm));
}

nn::BatchNorm2d SyncBatchNorm::checked_batch_norm(int64_t num_features, const nn::BatchNormOptions& options) {
  INGOT_CHECK_SHAPE(num_features > 0, "SyncBatchNorm: num_features {} must be >= 1", num_features);
  INGOT_CHECK(options.eps > 0.0 && options.momentum >= 0.0 && options.momentum <= 1.0,
              "SyncBatchNorm: eps {} must be > 0 and momentum {} in [0, 1]", options.eps, options.momentum);
  return nn::BatchNorm2d(num_features, options);
}

Tensor SyncBatchNorm::forward(const Tensor& x) {
  output_shape(x.shape());
  // As BatchNorm2d: a checkpointed segment recomputed in the backward pass must not move the
  // running statistics a second time.
  const bool batch_stats = is_training() || !options_.track_running_stats;
  const bool update = batch_stats && options_.track_running_stats && !autograd::is_recomputing();
  if (is_training() && update) {
    NoGradGuard no_grad;
    num_batches_tracked_.fill_(num_batches_tracked_.item() + 1);
  }
  // torch's SyncBatchNorm synchronises only in training mode (eval without running statistics
  // keeps each rank's own batch statistics).
  if (is_training() && comm_ != nullptr && comm_->world_size() > 1) return forward_synced(x, update);
  const bool pass_stats = !batch_stats || update;
  return batch_norm(x, weight_, bias_, pass_stats ? running_mean_ : Tensor(), pass_stats ? running_var_ : Tensor(),
                    batch_stats, options_.momentum, options_.eps)
      .y;
}

Tensor SyncBatchNorm::forward_synced(const Tensor& x, bool update) {
  const DType ct = compute_dtype(x.dtype());
  const DType x_dtype = x.dtype();
  const int ndim = x.shape().size();
  std::vector<int64_t> dims{0};
  for (int d = 2; d < ndim; ++d) dims.push_back(d);
  Shape per_channel;
  per_channel.resize(ndim, 1);
  per_channel[1] = c_;
  const int64_t local_count = x.numel() / c_;

  Tensor xhat, invstd, count;
  {
    NoGradGuard no_grad;
    const Tensor xc = x.detach().to(ct);
    // The reduced tensor is float64: the variance is sumsq / N - mean^2, which cancels badly in
    // float32 once |mean| >> std. Each rank's part is centred first, in the input's precision
    // (sumsq = sum((x - m)^2) + n m^2 with m the local mean), so no float64 copy of x is made.
    Tensor stats = zeros({2 * c_ + 1}, DType::F64, x.device());
    if (local_count > 0) {
      const Tensor m = ingot::mean(xc, dims, true);
      const Tensor d = xc - m;
      const Tensor m64 = m.reshape({c_}).to(DType::F64);
      const auto n = static_cast<double>(local_count);
      stats =
          concat({m64 * n, sum(d * d, dims).to(DType::F64) + m64 * m64 * n, full({1}, n, DType::F64, x.device())}, 0);
    }
    comm_->all_reduce(stats, ReduceOp::Sum);
    count = stats.slice(0, 2 * c_, 2 * c_ + 1);  // kept on the device: no host synchronisation
    const Tensor mean64 = stats.slice(0, 0, c_) / count;
    const Tensor var64 = clamp(stats.slice(0, c_, 2 * c_) / count - mean64 * mean64, 0.0, std::nullopt);
    invstd = rsqrt(var64 + options_.eps).to(ct).reshape(per_channel);
    xhat = (xc - mean64.to(ct).reshape(per_channel)) * invstd;
    if (update) {
      const double mom = options_.momentum;
      const Tensor unbiased = var64 * count / (count - 1.0);
      running_mean_.copy_(running_mean_.to(DType::F64) * (1.0 - mom) + mean64 * mom);
      running_var_.copy_(running_var_.to(DType::F64) * (1.0 - mom) + unbiased * mom);
    }
  }

  // dx = invstd * (g - sum(g) / N - xhat * sum(g * xhat) / N), g = dL/dxhat, with global sums.
  const Communicator* comm = comm_;
  const int64_t c = c_;
  Tensor y = autograd::record_view(
      x, xhat, "SyncBatchNormBackward",
      [comm, c, dims, per_channel, ct, x_dtype, count, invstd, saved = xhat.detach()](const Tensor& grad) {
        const Tensor g = grad.to(ct);
        Tensor sums = concat({sum(g, dims).to(DType::F64), sum(g * saved, dims).to(DType::F64)}, 0);
        comm->all_reduce(sums, ReduceOp::Sum);
        const Tensor mean_g = (sums.slice(0, 0, c) / count).to(ct).reshape(per_channel);
        const Tensor mean_g_xhat = (sums.slice(0, c, 2 * c) / count).to(ct).reshape(per_channel);
        return ((g - mean_g - saved * mean_g_xhat) * invstd).to(x_dtype);
      });
  if (options_.affine) y = y * weight_.reshape(per_channel) + bias_.reshape(per_channel);
  return y.to(x_dtype);
}

Shape SyncBatchNorm::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() >= 2 && input[1] == c_,
                    "SyncBatchNorm({}) expects [N, C, ...] input with {} channels, got {}", c_, c_, input.str());
  return input;
}

std::string SyncBatchNorm::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", c_, options_.eps, options_.momentum,
                     nn::py_bool(options_.affine), nn::py_bool(options_.track_running_stats));
}

int convert_sync_batchnorm(nn::Module& root, const Communicator& comm) {
  INGOT_CHECK_AS(dynamic_cast<nn::BatchNorm2d*>(&root) == nullptr, InputError,
                 "convert_sync_batchnorm: the root module is itself a BatchNorm2d and cannot replace itself; "
                 "wrap it in a Sequential");
  // Collected first: replacing while walking would change the tree under the walk.
  std::vector<std::pair<std::string, const nn::BatchNorm2d*>> found;
  for (const auto& [name, m] : root.named_modules())
    if (const auto* bn = dynamic_cast<const nn::BatchNorm2d*>(m)) found.emplace_back(name, bn);
  for (const auto& [name, bn] : found) root.replace_child(name, SyncBatchNorm::from_batch_norm(*bn, &comm));
  return static_cast<int>(found.size());
}

}  // namespace ingot::parallel
