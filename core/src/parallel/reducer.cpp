// Reducer: buckets, hooks, the communication thread, finalize.
#include "ingot/parallel/reducer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ingot/autograd/hooks.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/runtime/profiler.h"

namespace ingot::parallel {

Reducer::Reducer(std::vector<std::pair<std::string, Tensor>> named_params, const Communicator& comm,
                 ReducerOptions options)
    : comm_(comm), options_(options) {
  for (auto& [name, p] : named_params)
    if (p.requires_grad()) {
      names_.push_back(name);
      params_.push_back(p);
    }
  INGOT_CHECK(!params_.empty(), "data parallel: the model has no parameter that requires grad");
  INGOT_CHECK(options_.bucket_mb > 0, "data parallel: bucket_mb must be > 0, got {}", options_.bucket_mb);
  // Reverse registration order; a new bucket when the dtype changes or the cap is reached.
  bucket_of_.assign(params_.size(), 0);
  ready_.assign(params_.size(), false);
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor& p = params_[k];
    const double cap_mb = buckets_.size() <= 1 ? std::min(options_.first_bucket_mb, options_.bucket_mb) : options_.bucket_mb;
    const int64_t cap = static_cast<int64_t>(cap_mb * 1024 * 1024);
    const int64_t pbytes = p.numel() * static_cast<int64_t>(dtype_size(p.dtype()));
    const bool fresh = buckets_.empty() || params_[buckets_.back().params.front()].dtype() != p.dtype() ||
                       params_[buckets_.back().params.front()].device() != p.device() ||
                       (bytes > 0 && bytes + pbytes > cap);
    if (fresh) {
      buckets_.emplace_back();
      bytes = 0;
    }
    Bucket& b = buckets_.back();
    b.offsets.push_back(b.params.empty() ? 0 : b.offsets.back() + params_[b.params.back()].numel());
    b.params.push_back(k);
    bucket_of_[k] = buckets_.size() - 1;
    bytes += pbytes;
  }
  for (Bucket& b : buckets_) {
    const Tensor& last = params_[b.params.back()];
    b.buffer = zeros(Shape{b.offsets.back() + last.numel()}, last.dtype(), last.device());
  }
  for (size_t k = 0; k < params_.size(); ++k)
    hook_ids_.push_back(autograd::register_post_accumulate_grad_hook(params_[k], [this, k](const Tensor&) {
      mark_ready(k);
    }));
  if (options_.overlap && comm_.device().is_cpu()) thread_ = std::thread([this] { comm_loop(); });
}

Reducer::~Reducer() {
  for (size_t k = 0; k < params_.size(); ++k) autograd::remove_post_accumulate_grad_hook(params_[k], hook_ids_[k]);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Reducer::watches(const std::vector<std::pair<std::string, Tensor>>& named_params) const {
  size_t k = 0;
  for (const auto& [name, p] : named_params) {
    if (!p.requires_grad()) continue;
    if (k >= params_.size() || !params_[k].same_tensor(p)) return false;
    ++k;
  }
  return k == params_.size();
}

void Reducer::prepare_for_backward(bool sync) {
  INGOT_CHECK(!in_backward_, "data parallel: a backward pass began before the last one was finalized");
  sync_ = sync;
  if (!sync) return;
  in_backward_ = true;
  std::fill(ready_.begin(), ready_.end(), false);
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.launched = b.done = false;
  }
  next_launch_ = 0;
  std::lock_guard<std::mutex> lock(mu_);
  finished_ = 0;
}

void Reducer::mark_ready(size_t k) {
  if (!in_backward_) return;  // a no_sync pass, or a backward outside training steps
  INGOT_CHECK(!ready_[k],
              "data parallel: parameter '{}' received its gradient twice in one backward pass (a weight used twice "
              "is not supported by the reducer yet)",
              names_[k]);
  ready_[k] = true;
  Bucket& b = buckets_[bucket_of_[k]];
  if (--b.pending == 0) launch_in_order();
}

void Reducer::fill_and_launch(size_t i) {
  Bucket& b = buckets_[i];
  {
    const ProfileScope scope("ddp: fill bucket", "ddp");
    const NoGradGuard no_grad;
    for (size_t j = 0; j < b.params.size(); ++j) {
      const Tensor& p = params_[b.params[j]];
      const Tensor slot = b.buffer.slice(0, b.offsets[j], b.offsets[j] + p.numel());
      const Tensor g = p.grad();
      if (g.defined())
        slot.copy_(g.reshape(Shape{p.numel()}));
      else
        slot.fill_(0.0);  // unused here (find_unused_parameters); other ranks may have used it
    }
  }
  b.launched = true;
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(i);
    }
    cv_.notify_all();
  } else {
    const ProfileScope scope("ddp: all_reduce", "ddp");
    comm_.all_reduce(b.buffer, ReduceOp::Avg);
    b.done = true;
    std::lock_guard<std::mutex> lock(mu_);
    ++finished_;
  }
}

void Reducer::launch_in_order() {
  // Every rank launches buckets in index order, so the collectives pair up across ranks.
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    fill_and_launch(next_launch_);
    ++next_launch_;
  }
}

void Reducer::comm_loop() {
  while (true) {
    size_t i = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      i = queue_.front();
      queue_.pop_front();
    }
    try {
      if (!failure_) {
        const ProfileScope scope("ddp: all_reduce", "ddp");
        comm_.all_reduce(buckets_[i].buffer, ReduceOp::Avg);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      failure_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      buckets_[i].done = true;
      ++finished_;
    }
    cv_.notify_all();
  }
}

void Reducer::finalize() {
  if (!in_backward_) return;
  in_backward_ = false;
  const auto launched = [&] {
    return static_cast<size_t>(std::count_if(buckets_.begin(), buckets_.end(), [](const Bucket& b) { return b.launched; }));
  };
  const size_t launched_early = launched();
  std::vector<std::string> unused;
  for (size_t k = 0; k < params_.size(); ++k)
    if (!ready_[k]) unused.push_back(names_[k]);
  if (!unused.empty()) {
    if (!options_.find_unused_parameters) {
      // The buckets already queued must finish before the error leaves (they use this object).
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return failure_ || finished_ == launched_early; });
      throw Error(fmt::format(
          "data parallel: {} parameter(s) got no gradient in this step ({}): set parallel.find_unused_parameters: "
          "true when the model leaves some out",
          unused.size(), fmt::join(unused.size() > 5 ? std::vector<std::string>(unused.begin(), unused.begin() + 5) : unused, ", ")));
    }
    for (size_t k = 0; k < params_.size(); ++k)
      if (!ready_[k]) {
        ready_[k] = true;
        --buckets_[bucket_of_[k]].pending;
      }
    launch_in_order();
  }
  {
    const ProfileScope scope("ddp: wait", "ddp");
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return failure_ || finished_ == buckets_.size(); });
    if (failure_) {
      // (the thread keeps draining its queue without communicating)
      cv_.wait(lock, [&] { return finished_ == launched(); });
      std::rethrow_exception(failure_);
    }
  }
  const NoGradGuard no_grad;
  for (const Bucket& b : buckets_)
    for (size_t j = 0; j < b.params.size(); ++j) {
      const Tensor& p = params_[b.params[j]];
      const Tensor avg = b.buffer.slice(0, b.offsets[j], b.offsets[j] + p.numel()).view(p.shape());
      const Tensor g = p.grad();
      if (g.defined() && !g.is_opaque() && g.is_contiguous())
        g.copy_(avg);
      else
        p.set_grad(avg.clone());
    }
  reductions_ += static_cast<int64_t>(buckets_.size());
  early_ += static_cast<int64_t>(launched_early);
}

}  // namespace ingot::parallel
