// DataLoader: workers claim batch numbers in order within a window of prefetch_batches *
// num_workers beyond the consumer, assemble them, and park them in a map the consumer drains in
// order. The batch content depends only on (seed, epoch, batch number), never on the worker.
#include "ingot/data/data_loader.h"

#include <algorithm>
#include <cstring>

namespace ingot::data {

namespace {

/// The length of the longest sequence of `ids` [b, t] once trailing `pad` ids are cut.
int64_t longest(const int64_t* ids, int64_t b, int64_t t, int64_t pad) {
  int64_t most = 1;
  for (int64_t i = 0; i < b; ++i) {
    int64_t n = t;
    while (n > most && ids[i * t + n - 1] == pad) --n;
    most = std::max(most, n);
  }
  return most;
}

/// The first `t` columns of int64 [b, n], copied row by row (byte work: workers dispatch no op).
Tensor first_columns(const Tensor& x, int64_t t) {
  const int64_t b = x.size(0), n = x.size(1);
  Tensor out = Tensor::empty(Shape{b, t}, DType::I64);
  for (int64_t i = 0; i < b; ++i)
    std::memcpy(out.data<int64_t>() + i * t, x.data<int64_t>() + i * n, static_cast<size_t>(t) * sizeof(int64_t));
  return out;
}

/// Token ids [B, T] and targets [B, target...], both int64; masked for a masked-language-model
/// dataset, and cut to the batch's longest sequence (rounded up to a multiple of `multiple`) when
/// the dataset pads (padding per batch).
Batch assemble_ids(const Dataset& dataset, uint64_t seed, int64_t epoch, int64_t index,
                   std::span<const int64_t> indices, int64_t multiple) {
  const auto b = static_cast<int64_t>(indices.size());
  Shape input_shape{b}, target_shape{b};
  for (int64_t d : dataset.sample_shape()) input_shape.push_back(d);
  for (int64_t d : dataset.target_shape()) target_shape.push_back(d);
  Batch batch{Tensor::empty(input_shape, DType::I64), Tensor::empty(target_shape, DType::I64), epoch, index};
  const int64_t in_numel = dataset.sample_numel(), target_numel = dataset.target_shape().numel();
  int64_t* inputs = batch.inputs.data<int64_t>();
  int64_t* targets = batch.targets.data<int64_t>();
  const std::optional<TokenMasking> masking = dataset.masking();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t sample = indices[static_cast<size_t>(i)];
    dataset.read_ids(sample, inputs + i * in_numel, targets + i * target_numel);
    if (masking)
      mask_tokens(*masking, seed, epoch, sample, inputs + i * in_numel, targets + i * target_numel, in_numel);
  }
  const int64_t pad = dataset.special_tokens().pad;
  if (pad < 0 || input_shape.size() != 2) return batch;
  const int64_t longest_t = longest(inputs, b, in_numel, pad);
  const int64_t t = std::min(in_numel, (longest_t + multiple - 1) / multiple * multiple);
  if (t == in_numel) return batch;
  batch.inputs = first_columns(batch.inputs, t);
  if (target_shape.size() == 2) batch.targets = first_columns(batch.targets, t);
  return batch;
}

}  // namespace

Batch assemble_batch(const Dataset& dataset, const Augment& augment, uint64_t seed, int64_t epoch, int64_t index,
                     std::span<const int64_t> indices, int64_t pad_to_multiple_of) {
  if (dataset.input_dtype() == DType::I64)
    return assemble_ids(dataset, seed, epoch, index, indices, std::max<int64_t>(pad_to_multiple_of, 1));
  const Shape sample = dataset.sample_shape();
  const auto b = static_cast<int64_t>(indices.size());
  const int64_t numel = sample.numel();
  Batch batch{Tensor::empty(Shape{b, sample[0], sample[1], sample[2]}, DType::F32), Tensor::empty(Shape{b}, DType::I64),
              epoch, index};
  float* inputs = batch.inputs.data<float>();
  int64_t* targets = batch.targets.data<int64_t>();
  std::vector<float> scratch(augment.enabled() ? static_cast<size_t>(numel) : 0);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t sample_index = indices[static_cast<size_t>(i)];
    float* dst = inputs + i * numel;
    if (!augment.enabled()) {
      targets[i] = dataset.read_sample(sample_index, seed, epoch, dst);
      continue;
    }
    targets[i] = dataset.read_sample(sample_index, seed, epoch, scratch.data());
    apply_augment(augment, draw_augment(augment, seed, epoch, sample_index), dataset, scratch.data(), dst);
  }
  return batch;
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, LoaderOptions options)
    : dataset_(std::move(dataset)),
      options_(options),
      sampler_(dataset_ ? dataset_->size() : 0, options.batch_size, options.shuffle, options.drop_last, options.seed,
               options.rank, options.world_size) {
  INGOT_CHECK(dataset_ != nullptr, "DataLoader: no dataset");
  INGOT_CHECK_AS(options_.num_workers >= 0 && options_.num_workers <= 256, ConfigError,
                 "DataLoader: workers must be in [0, 256], got {}", options_.num_workers);
  INGOT_CHECK_AS(options_.prefetch_batches >= 1, ConfigError, "DataLoader: prefetch must be >= 1, got {}",
                 options_.prefetch_batches);
  INGOT_CHECK_AS(options_.augment.crop_padding >= 0, ConfigError, "DataLoader: crop padding must be >= 0, got {}",
                 options_.augment.crop_padding);
  INGOT_CHECK_AS(options_.mix.mixup_alpha >= 0.0 && options_.mix.cutmix_alpha >= 0.0 && options_.mix.prob >= 0.0 &&
                     options_.mix.prob <= 1.0 && options_.mix.switch_prob >= 0.0 && options_.mix.switch_prob <= 1.0,
                 ConfigError, "DataLoader: data.mix needs alphas >= 0 and prob, switch_prob in [0, 1]");
  INGOT_CHECK_AS(!options_.mix.enabled() || (dataset_->input_dtype() == DType::F32 && dataset_->target_shape().empty()),
                 ConfigError,
                 "DataLoader: data.mix (Mixup / CutMix) blends images with one class label each; this dataset gives "
                 "{} samples {} with targets {}: remove data.mix",
                 dtype_name(dataset_->input_dtype()), dataset_->sample_shape().str(), dataset_->target_shape().str());
  if (dataset_->input_dtype() == DType::I64) {
    INGOT_CHECK_AS(!options_.augment.enabled(), ConfigError,
                   "DataLoader: data.augment (random_crop, hflip) is for images; this dataset gives token ids {}: "
                   "remove data.augment",
                   dataset_->sample_shape().str());
  } else {
    INGOT_CHECK_AS(dataset_->input_dtype() == DType::F32, DTypeError,
                   "DataLoader: samples must be f32 values or int64 token ids, got {}",
                   dtype_name(dataset_->input_dtype()));
    INGOT_CHECK_SHAPE(dataset_->sample_shape().size() == 3, "DataLoader: samples must be [C, H, W], got {}",
                      dataset_->sample_shape().str());
  }
}

DataLoader::~DataLoader() { stop(); }

Batch DataLoader::make_batch(int64_t index) const {
  Batch batch = assemble_batch(*dataset_, options_.augment, options_.seed, epoch_, index, sampler_.batch(order_, index),
                               options_.pad_to_multiple_of);
  if (options_.mix.enabled()) {
    const MixDraw draw =
        draw_mix(options_.mix, options_.seed, epoch_, index, batch.inputs.size(2), batch.inputs.size(3));
    apply_mix(draw, dataset_->num_classes(), batch.inputs, batch.targets);
  }
  return batch;
}

void DataLoader::begin_epoch(int64_t epoch, int64_t start_batch) {
  stop();
  INGOT_CHECK(epoch >= 0, "DataLoader: epoch must be >= 0, got {}", epoch);
  INGOT_CHECK(start_batch >= 0 && start_batch <= num_batches(),
              "DataLoader: start batch {} outside [0, {}] for epoch {}; does the checkpoint belong to this data "
              "configuration (batch size, drop_last)?",
              start_batch, num_batches(), epoch);
  order_ = sampler_.order(epoch);
  epoch_ = epoch;
  end_ = num_batches();
  {
    std::lock_guard lock(mu_);
    consumed_ = start_batch;
    next_claim_ = start_batch;
    stopping_ = false;
  }
  const int workers = static_cast<int>(std::min<int64_t>(options_.num_workers, end_ - start_batch));
  for (int w = 0; w < workers; ++w) workers_.emplace_back([this] { worker_loop(); });
}

void DataLoader::worker_loop() {
  const int64_t window = static_cast<int64_t>(options_.prefetch_batches) * options_.num_workers;
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || next_claim_ >= end_ || next_claim_ < consumed_ + window; });
    if (stopping_ || next_claim_ >= end_) return;
    const int64_t index = next_claim_++;
    lock.unlock();
    Slot slot;
    try {
      slot.batch = make_batch(index);
    } catch (...) {
      slot.error = std::current_exception();
    }
    lock.lock();
    ready_.emplace(index, std::move(slot));
    ready_cv_.notify_all();
  }
}

std::optional<Batch> DataLoader::next() {
  INGOT_CHECK(epoch_ >= 0, "DataLoader: call begin_epoch(epoch) before next()");
  std::unique_lock lock(mu_);
  if (consumed_ >= end_) return std::nullopt;
  const int64_t index = consumed_;
  if (workers_.empty()) {
    ++consumed_;
    lock.unlock();
    return make_batch(index);
  }
  ready_cv_.wait(lock, [&] { return ready_.count(index) != 0; });
  Slot slot = std::move(ready_.extract(index).mapped());
  ++consumed_;
  work_cv_.notify_all();
  lock.unlock();
  if (slot.error) std::rethrow_exception(slot.error);
  return std::move(slot.batch);
}

int64_t DataLoader::batches_consumed() const {
  std::lock_guard lock(mu_);
  return consumed_;
}

void DataLoader::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  std::lock_guard lock(mu_);
  ready_.clear();
  end_ = std::min(end_, consumed_);  // the abandoned epoch yields nothing more
}

}  // namespace ingot::data
