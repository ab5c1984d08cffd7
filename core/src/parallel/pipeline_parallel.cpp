// PipelineParallel: the split of a Sequential into stages and the GPipe schedule. Activations
// travel after a small int64 header (micro-batch count, batch size, dtype, shape), so a stage
// needs no knowledge of the layers before it; gradients travel back in the shape of the
// activation they belong to, which the sender kept.
#include "ingot/parallel/pipeline_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ingot/autograd/engine.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/optim/clip_grad.h"

namespace ingot::parallel {

namespace {

// [count, batch, dtype, ndim, dims...]: activations of up to kMaxDims dimensions.
constexpr int64_t kMaxDims = 8;
constexpr int64_t kHeaderLen = 4 + kMaxDims;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Header {
  int64_t count = 0;
  int64_t batch = 0;
  DType dtype = DType::F32;
  Shape shape;
};

Tensor encode(const Tensor& t, int64_t count, int64_t batch, Device device) {
  INGOT_CHECK_SHAPE(t.dim() <= kMaxDims, "PipelineParallel: an activation of shape {} has more than {} dimensions",
                    t.shape().str(), kMaxDims);
  std::vector<int64_t> h(kHeaderLen, 0);
  h[0] = count;
  h[1] = batch;
  h[2] = static_cast<int64_t>(t.dtype());
  h[3] = t.dim();
  for (int d = 0; d < t.dim(); ++d) h[4 + d] = t.size(d);
  return Tensor::from_vector(h, Shape{kHeaderLen}).to(device);
}

Header decode(const Tensor& header) {
  const std::vector<int64_t> h = header.to_vector<int64_t>();
  INGOT_CHECK(h[2] >= 0 && h[2] < kDTypeCount && h[3] >= 0 && h[3] <= kMaxDims && h[0] >= 1 && h[1] >= 1,
              "PipelineParallel: a malformed activation header (count {}, batch {}, dtype {}, ndim {}); do all ranks "
              "run the same version with the same parallel.stages?",
              h[0], h[1], h[2], h[3]);
  Header out;
  out.count = h[0];
  out.batch = h[1];
  out.dtype = static_cast<DType>(h[2]);
  std::vector<int64_t> dims(h.begin() + 4, h.begin() + 4 + h[3]);
  out.shape = Shape(dims);
  return out;
}

std::string layer_list(const nn::Sequential& stage) {
  std::string out;
  for (const auto& [name, m] : stage.named_children()) out += (out.empty() ? "" : ", ") + m->type_name();
  return out;
}

}  // namespace

std::vector<int64_t> pipeline_bounds(const std::vector<int64_t>& layer_counts, int64_t num_layers, int world_size,
                                     const std::string& path) {
  INGOT_CHECK_AS(world_size >= 1, ConfigError, "{}: a world of {} ranks", path, world_size);
  std::vector<int64_t> bounds{0};
  if (layer_counts.empty()) {
    INGOT_CHECK_AS(num_layers >= world_size, ConfigError,
                   "{}: the model has {} top-level layers, too few for {} pipeline stages (one per rank); use fewer "
                   "ranks or a deeper model",
                   path, num_layers, world_size);
    const int64_t per = num_layers / world_size, extra = num_layers % world_size;
    for (int s = 0; s < world_size; ++s) bounds.push_back(bounds.back() + per + (s < extra ? 1 : 0));
    return bounds;
  }
  for (size_t i = 0; i < layer_counts.size(); ++i) {
    INGOT_CHECK_AS(layer_counts[i] >= 1, ConfigError,
                   "{}[{}]: stage {} holds {} layers; every stage needs at least one", path, i, i, layer_counts[i]);
    bounds.push_back(bounds.back() + layer_counts[i]);
  }
  INGOT_CHECK_AS(static_cast<int64_t>(layer_counts.size()) == world_size, ConfigError,
                 "{}: {} stages for {} ranks; pipeline mode runs one stage per rank, so list {} layer counts", path,
                 layer_counts.size(), world_size, world_size);
  INGOT_CHECK_AS(bounds.back() == num_layers, ConfigError,
                 "{}: the stages hold {} layers, but the model has {} top-level layers; make the counts add up to {}",
                 path, bounds.back(), num_layers, num_layers);
  return bounds;
}

std::vector<int64_t> micro_batch_sizes(int64_t batch, int64_t micro_batches) {
  INGOT_CHECK_AS(micro_batches >= 1, ConfigError, "parallel.micro_batches: {} is not a positive count", micro_batches);
  INGOT_CHECK_SHAPE(batch >= 1, "PipelineParallel: an empty batch");
  const int64_t count = std::min(micro_batches, batch);
  std::vector<int64_t> sizes(static_cast<size_t>(count), batch / count);
  for (int64_t i = 0; i < batch % count; ++i) ++sizes[static_cast<size_t>(i)];
  return sizes;
}

PipelineParallel::PipelineParallel(const nn::ModulePtr& model, const std::vector<int64_t>& layer_counts,
                                   const Communicator& comm)
    : comm_(&comm), stage_(std::make_shared<nn::Sequential>()), rank_(comm.rank()), world_(comm.world_size()) {
  INGOT_CHECK_AS(model != nullptr, ConfigError, "parallel.mode: pipeline: no model");
  const auto* seq = dynamic_cast<const nn::Sequential*>(model.get());
  INGOT_CHECK_AS(seq != nullptr, ConfigError,
                 "parallel.mode: pipeline splits a Sequential model by its top-level layers, but the model is a {}; "
                 "describe it as a list of layers (model.layers) or use parallel.mode: ddp",
                 model->type_name());
  const std::vector<int64_t> bounds = pipeline_bounds(layer_counts, static_cast<int64_t>(seq->size()), world_);
  first_ = bounds[static_cast<size_t>(rank_)];
  end_ = bounds[static_cast<size_t>(rank_) + 1];
  for (int64_t i = first_; i < end_; ++i) {
    const auto& [name, child] = seq->named_children()[static_cast<size_t>(i)];
    stage_->push_back(name, child);
  }
  stage_->train(model->is_training());
  device_ = model->device();
  INGOT_CHECK_AS(comm.device() == device_, ConfigError,
                 "parallel.mode: pipeline: the model is on {} but communicator '{}' exchanges tensors on {}; "
                 "create the communicator for the model's device",
                 device_.str(), comm.name(), comm.device().str());
}

std::string PipelineParallel::describe() const {
  return fmt::format("stage {} of {}: layers {}-{} ({}), {} parameters", rank_, world_, first_, end_ - 1,
                     layer_list(*stage_), stage_->num_parameters());
}

void PipelineParallel::send_activation(const Tensor& t, int peer, int64_t count, int64_t batch) const {
  comm_->send(encode(t, count, batch, device_), peer);
  comm_->send(t, peer);
}

Tensor PipelineParallel::recv_activation(int peer, int64_t& count, int64_t& batch) const {
  const Tensor header = Tensor::empty(Shape{kHeaderLen}, DType::I64, device_);
  comm_->recv(header, peer);
  const Header h = decode(header);
  count = h.count;
  batch = h.batch;
  const Tensor t = Tensor::empty(h.shape, h.dtype, device_);
  comm_->recv(t, peer);
  return t;
}

double PipelineParallel::train_step(const Tensor& inputs, const Tensor& targets, const PipelineLossFn& loss_fn,
                                    int64_t micro_batches) {
  const EnableGradGuard grad_on;
  std::vector<int64_t> sizes;
  int64_t batch = 0;
  if (is_first()) {
    INGOT_CHECK_SHAPE(inputs.defined() && inputs.dim() >= 1, "PipelineParallel::train_step: rank 0 needs the inputs");
    batch = inputs.size(0);
    sizes = micro_batch_sizes(batch, micro_batches);
  }
  // Forwards of every micro-batch, keeping each one's graph: this stage's inputs (leaves whose
  // .grad is what goes back) and outputs (or, on the last stage, weighted losses).
  std::vector<Tensor> stage_in, stage_out;
  Tensor loss_sum;  // on the last rank: read once, after the step, not once per micro-batch
  int64_t start = 0;
  for (size_t i = 0; i == 0 || i < sizes.size(); ++i) {
    Tensor in;
    if (is_first()) {
      in = inputs.slice(0, start, start + sizes[i]).to(device_);
    } else {
      int64_t count = 0;
      in = recv_activation(rank_ - 1, count, batch);
      if (i == 0) sizes = micro_batch_sizes(batch, count);
      in.set_requires_grad(true);
    }
    const int64_t n = in.size(0);
    Tensor out = (*stage_)(in);
    if (is_last()) {
      INGOT_CHECK_SHAPE(targets.defined() && targets.dim() >= 1 && targets.size(0) == batch,
                        "PipelineParallel::train_step: the last rank needs the batch's {} targets, got {}", batch,
                        targets.defined() ? targets.shape().str() : std::string("none"));
      const Tensor loss = loss_fn(out, targets.slice(0, start, start + n).to(device_));
      INGOT_CHECK_SHAPE(loss.numel() == 1, "PipelineParallel::train_step: the loss has shape {}, not one element",
                        loss.shape().str());
      out = loss * (static_cast<double>(n) / static_cast<double>(batch));
      loss_sum = loss_sum.defined() ? loss_sum + out.detach() : out.detach();
    } else {
      send_activation(out.detach().contiguous(), rank_ + 1, static_cast<int64_t>(sizes.size()), batch);
    }
    stage_in.push_back(in);
    stage_out.push_back(out);
    start += n;
  }
  // Backwards in reverse order; each stage's input gradient goes to the stage before.
  for (size_t j = stage_out.size(); j-- > 0;) {
    Tensor grad;
    if (!is_last()) {
      grad = Tensor::empty(stage_out[j].shape(), stage_out[j].dtype(), device_);
      comm_->recv(grad, rank_ + 1);
    }
    if (stage_out[j].requires_grad()) autograd::backward({stage_out[j]}, {grad});
    if (!is_first()) {
      const Tensor& in = stage_in[j];
      Tensor g = in.grad();
      g = g.defined() ? g.to(in.dtype()).contiguous() : zeros_like(in);
      comm_->send(g, rank_ - 1);
    }
    stage_in[j] = Tensor();
    stage_out[j] = Tensor();
  }
  const double value = is_last() ? loss_sum.item() : 0.0;
  if (world_ == 1) return value;
  const Tensor loss = Tensor::from_vector(std::vector<double>{value}, Shape{1}).to(device_);
  comm_->broadcast(loss, world_ - 1);
  return loss.item();
}

double PipelineParallel::clip_grad_norm(double max_norm) {
  const NoGradGuard no_grad;
  const std::vector<Tensor> params = parameters();
  const double local = params.empty() ? 0.0 : optim::clip_grad_norm_(params, kInf);
  const Tensor sq = Tensor::from_vector(std::vector<double>{local * local}, Shape{1}).to(device_);
  if (world_ > 1) comm_->all_reduce(sq, ReduceOp::Sum);
  const double norm = std::sqrt(sq.item());
  if (norm > max_norm) {
    const double coef = max_norm / (norm + 1e-6);
    for (const Tensor& p : params)
      if (const Tensor g = p.grad(); g.defined()) g.copy_(g * coef);
  }
  return norm;
}

Tensor PipelineParallel::forward(const Tensor& inputs) {
  const NoGradGuard no_grad;
  Tensor x;
  int64_t count = 1, batch = 0;
  if (is_first()) {
    INGOT_CHECK_SHAPE(inputs.defined() && inputs.dim() >= 1, "PipelineParallel::forward: rank 0 needs the inputs");
    x = inputs.to(device_);
    batch = x.size(0);
  } else {
    x = recv_activation(rank_ - 1, count, batch);
  }
  Tensor y = (*stage_)(x).contiguous();
  if (!is_last()) send_activation(y, rank_ + 1, 1, batch);
  if (world_ == 1) return y;
  // Every rank gets the output: its header, then the values, from the last rank.
  const Tensor header =
      is_last() ? encode(y, 1, batch, device_) : Tensor::empty(Shape{kHeaderLen}, DType::I64, device_);
  comm_->broadcast(header, world_ - 1);
  const Header h = decode(header);
  if (!is_last()) y = Tensor::empty(h.shape, h.dtype, device_);
  comm_->broadcast(y, world_ - 1);
  return y;
}

}  // namespace ingot::parallel
