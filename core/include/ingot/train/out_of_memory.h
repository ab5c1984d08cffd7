// What a training run that ran out of memory can change: the levers its config has left (a
// smaller batch, mixed precision, activation checkpointing), named as the keys to set.
#pragma once

#include <cstdint>
#include <string>

#include "ingot/train/train_config.h"

namespace ingot::train {

/// "levers this config has not used: data.batch_size: 64 (now 128; train.accumulate: 2 keeps the
/// effective batch), train.amp: {dtype: bf16}, train.checkpointing: {segments: N}": only the
/// levers not already pulled (amp already on is not offered again).
std::string out_of_memory_levers(const TrainConfig& train, int64_t batch_size);

}  // namespace ingot::train
