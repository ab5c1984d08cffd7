// Joining a distributed run: the pipeline's side of `parallel:` and the launch variables — which
// process group this process belongs to, on which device, and the checks a run makes before it
// trains on several processes.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <vector>

#include "ingot/config/config.h"
#include "ingot/parallel/parallel_config.h"
#include "ingot/parallel/process_group.h"
#include "ingot/train/stage.h"

namespace ingot::train {

/// The group this process joins, or null for a single process (no launch variables, or a world
/// of one without `parallel:`). Started as one of several ranks without `parallel:`, throws ConfigError (every rank
/// would train alone and write the same run folder). On CUDA each rank takes cuda:LOCAL_RANK
/// (`device` is updated). Prints one line about the group to `out`.
std::unique_ptr<parallel::ProcessGroup> join_distributed_run(const config::Config& cfg,
                                                             const parallel::ParallelConfig& parallel, Device& device,
                                                             std::ostream& out);

/// Runs `body` (the pipeline) as a rank of `group` (null: a single process, body as it is). When
/// it throws, the other ranks learn why: a failure of this rank's own (config, data, non-finite,
/// out of memory) is left in the store; a lost collective or store (a peer stopped) is rethrown
/// naming the rank that failed first, after a pause that lets that rank's exit be seen first.
int run_as_rank(parallel::ProcessGroup* group, const std::function<int()>& body);

/// Refuses, with the stage's name, stages that cannot run on several processes
/// (PipelineStage::runs_distributed: compression, for one).
void check_stages_for_distributed(const std::vector<std::unique_ptr<PipelineStage>>& stages, const std::string& file);

}  // namespace ingot::train
