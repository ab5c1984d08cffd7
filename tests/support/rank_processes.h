// Multi-process test cases: a test case that calls run_as_ranks starts `world` copies of its own
// test executable, each running only that test case as one rank of a group on this machine
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT
// set, one OpenMP thread), and checks that all of them pass.
//
//   TEST_CASE("gloo: all_reduce sums over 3 processes") {
//     if (!ingot::test::run_as_ranks(3)) return;   // the parent: spawned, waited, checked
//     ... this process is one rank: parallel::dist_env_from_environment() says which ...
//   }
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ingot::test {

struct RanksOptions {
  std::chrono::seconds timeout{60};  ///< a rank still running then is killed, and the test fails
  std::vector<std::string> env;      ///< extra NAME=VALUE for every rank
};

/// In the parent process: runs the current test case as `world` rank processes, waits for them
/// (killing all after the timeout), and REQUIREs that every one exited 0 — a failure shows each
/// failed rank's output. Returns false there. In a rank process: returns true at once.
bool run_as_ranks(int world, const RanksOptions& options = {});

/// Like run_as_ranks, but returns each rank's exit code (128 + n for a signal) instead of
/// requiring success, and the ranks' combined output in `output`; for tests of failures. In a
/// rank process, returns an empty vector.
std::vector<int> run_ranks_collect(int world, std::string& output, const RanksOptions& options = {});

/// True in a process started by run_as_ranks.
bool in_rank_process();

/// A TCP port that was free a moment ago on 127.0.0.1.
int free_port();

}  // namespace ingot::test
