// DataLoader: batches of a Dataset in sampler order, assembled by N worker threads (byte work
// only: copy, crop, flip) into a bounded queue and handed out strictly in order, so the batches
// are identical for any worker count. An epoch can start at any batch (resume from a checkpoint).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "ingot/data/augment.h"
#include "ingot/data/batch_mix.h"
#include "ingot/data/dataset.h"
#include "ingot/data/sampler.h"

namespace ingot::data {

struct LoaderOptions {
  int64_t batch_size = 64;
  bool shuffle = false;
  bool drop_last = false;
  int num_workers = 0;       ///< 0: assemble each batch on the calling thread inside next()
  int prefetch_batches = 2;  ///< batches each worker may hold ready ahead (PyTorch's prefetch_factor)
  /// Token batches of a padding dataset are cut to their longest sequence rounded up to a
  /// multiple of this (at most the dataset's length): fewer distinct shapes for a compiled step.
  int64_t pad_to_multiple_of = 1;
  Augment augment;
  /// Mixup / CutMix of each batch (classification images): the targets become f32 [B, classes].
  BatchMix mix;
  uint64_t seed = 0;  ///< keys the shuffle and the augmentations
  int rank = 0;        ///< this process's shard of each epoch (distributed training)
  int world_size = 1;  ///< shards in all: every rank gets the same number of batches
};

/// One batch: `inputs` f32 [B, C, H, W] (or int64 token ids [B, T]) on the host, `targets` i64
/// [B] (or [B, T]: a target per position; f32 [B, classes] class probabilities when the loader
/// mixes batches); `index` counts the batches of `epoch` from 0.
struct Batch {
  Tensor inputs;
  Tensor targets;
  int64_t epoch = 0;
  int64_t index = 0;
  /// What throughput counts: the token ids of a token batch (a sequence classifier's [B, T]
  /// inputs, not its [B] labels), else the samples.
  int64_t units() const { return inputs.dtype() == DType::I64 ? inputs.numel() : inputs.size(0); }
};

/// Reads `indices` of `dataset` into a new batch, augmenting sample i with the draw of
/// (seed, epoch, i). What every worker runs; deterministic. `pad_to_multiple_of`: as LoaderOptions'.
Batch assemble_batch(const Dataset& dataset, const Augment& augment, uint64_t seed, int64_t epoch, int64_t index,
                     std::span<const int64_t> indices, int64_t pad_to_multiple_of = 1);

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, LoaderOptions options);
  /// Stops the workers, mid-epoch or not, and joins them.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  const Dataset& dataset() const { return *dataset_; }
  const LoaderOptions& options() const { return options_; }
  const Sampler& sampler() const { return sampler_; }
  int64_t num_batches() const { return sampler_.num_batches(); }

  /// Starts `epoch` at batch `start_batch` (0 normally; the checkpoint's batches_consumed() when
  /// resuming), abandoning any epoch in progress. Batches before `start_batch` are skipped
  /// without being assembled.
  void begin_epoch(int64_t epoch, int64_t start_batch = 0);
  /// The next batch of the epoch in order, or nothing when the epoch is over. Rethrows a
  /// worker's error (e.g. a bad sample) for the batch it happened in.
  std::optional<Batch> next();
  /// The epoch begun last (-1 before the first begin_epoch).
  int64_t epoch() const { return epoch_; }
  /// Batches of this epoch handed to the caller, counting the skipped ones: what a checkpoint
  /// records (prefetched batches are not consumed).
  int64_t batches_consumed() const;
  /// Abandons the epoch: workers finish their current batch and are joined; next() then returns
  /// nothing until the next begin_epoch.
  void stop();

 private:
  struct Slot {
    Batch batch;
    std::exception_ptr error;
  };
  Batch make_batch(int64_t index) const;
  void worker_loop();

  std::shared_ptr<const Dataset> dataset_;
  LoaderOptions options_;
  Sampler sampler_;
  std::vector<int64_t> order_;  // this epoch's order; read-only while workers run
  int64_t epoch_ = -1;
  int64_t end_ = 0;  // batches in the epoch

  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // workers wait for room in the window
  std::condition_variable ready_cv_;  // next() waits for its batch
  int64_t consumed_ = 0;              // next batch to hand out
  int64_t next_claim_ = 0;            // next batch a worker will assemble
  bool stopping_ = false;
  std::map<int64_t, Slot> ready_;
  std::vector<std::thread> workers_;
};

}  // namespace ingot::data
