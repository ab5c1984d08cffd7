// The out-of-memory levers of a run, from its train: section and batch size.
#include "ingot/train/out_of_memory.h"

#include <fmt/format.h>

#include <vector>

namespace ingot::train {

std::string out_of_memory_levers(const TrainConfig& train, int64_t batch_size) {
  std::vector<std::string> levers;
  if (batch_size > 1)
    levers.push_back(fmt::format("data.batch_size: {} (now {}; train.accumulate: {} keeps the effective batch)",
                                 batch_size / 2, batch_size, train.accumulate * 2));
  if (!train.amp.enabled) levers.emplace_back("train.amp: {dtype: bf16}");
  if (!train.checkpointing()) levers.emplace_back("train.checkpointing: {segments: N}");
  if (levers.empty()) return "no memory lever left in this config: a smaller model or a device with more memory";
  std::string text = "levers this config has not used: ";
  for (size_t i = 0; i < levers.size(); ++i) text += (i == 0 ? "" : ", ") + levers[i];
  return text;
}

}  // namespace ingot::train
