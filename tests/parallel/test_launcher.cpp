// The launcher (ingot/parallel/launcher.h) with /bin/sh ranks: the variables each rank gets, a
// failed or killed rank stopping the others, SIGKILL after the grace period, signals to the
// launcher forwarded once (a second one kills), invalid options, and no child left behind.
#include <catch2/catch.hpp>

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/parallel/launcher.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using ingot::parallel::launch;
using ingot::parallel::LaunchOptions;
using ingot::parallel::LaunchResult;

extern char** environ;

namespace {

// A fresh folder for the ranks' files, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ingot-launch-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Options whose launcher lines are collected instead of printed.
LaunchOptions options(int nproc, std::vector<std::string>& messages) {
  LaunchOptions o;
  o.nproc_per_node = nproc;
  o.on_message = [&messages](std::string_view line) { messages.emplace_back(line); };
  return o;
}

std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

// Every rank was reaped: this process has no child left (zombie or running).
void require_no_children() {
  errno = 0;
  REQUIRE(waitpid(-1, nullptr, WNOHANG) == -1);
  REQUIRE(errno == ECHILD);
}

// Waits (up to 10 s) until every file exists; a rank writes one when its signal handling is set up.
bool wait_for_files(const std::vector<std::string>& files) {
  for (int i = 0; i < 1000; ++i) {
    bool all = true;
    for (const std::string& f : files) all = all && fs::exists(f);
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// This process's environment without `name`.
std::vector<std::string> environment_without(const std::string& name) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (!std::string(*e).starts_with(name + "=")) env.emplace_back(*e);
  return env;
}

// A rank script that keeps running for at most ~10 s (so a launcher bug fails the test instead of
// hanging it), after `setup`.
std::string long_rank(const std::string& setup) {
  return setup + "; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done";
}

}  // namespace

TEST_CASE("launch: each rank gets RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR and MASTER_PORT",
          "[parallel][launcher]") {
  TempDir dir;
  std::vector<std::string> messages;
  LaunchOptions o = options(3, messages);
  o.nnodes = 2;
  o.node_rank = 1;
  o.master_addr = "10.1.2.3";
  o.master_port = 29555;
  std::vector<std::string> env = environment_without("RANK");
  env.push_back("RANK=99");  // a stale variable of the caller is replaced
  env.push_back("INGOT_TEST_MARK=kept");
  o.environment = env;
  const LaunchResult r = launch(
      o, sh("echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $INGOT_TEST_MARK\" > " +
            dir.path.string() + "/$LOCAL_RANK"));
  CHECK(r.exit_code == 0);
  CHECK(r.first_failure.empty());
  CHECK(messages.empty());
  REQUIRE(r.ranks.size() == 3);
  for (int local = 0; local < 3; ++local) {
    CHECK(read_file(dir.file(std::to_string(local))) ==
          fmt::format("{} {} 6 3 10.1.2.3 29555 kept\n", 3 + local, local));
    CHECK(r.ranks[static_cast<size_t>(local)].rank == 3 + local);
    CHECK(r.ranks[static_cast<size_t>(local)].local_rank == local);
    CHECK(r.ranks[static_cast<size_t>(local)].exit_code == 0);
    CHECK(r.ranks[static_cast<size_t>(local)].signal == 0);
  }
  require_no_children();
}

TEST_CASE(
    "launch: each rank leads its own process group so a terminal's Ctrl-C reaches it only through the "
    "launcher",
    "[parallel][launcher]") {
  TempDir dir;
  std::vector<std::string> messages;
  // Field 5 of /proc/PID/stat is the process group.
  const LaunchResult r =
      launch(options(2, messages), sh("cut -d' ' -f5 /proc/$$/stat > " + dir.path.string() + "/$RANK"));
  REQUIRE(r.exit_code == 0);
  for (int rank = 0; rank < 2; ++rank) {
    const int pgid = std::stoi(read_file(dir.file(std::to_string(rank))));
    CHECK(pgid == r.ranks[static_cast<size_t>(rank)].pid);
    CHECK(pgid != getpgrp());
  }
  require_no_children();
}

TEST_CASE("launch: one node with master_port 0 gets a free port that every rank sees", "[parallel][launcher]") {
  TempDir dir;
  std::vector<std::string> messages;
  const LaunchResult r =
      launch(options(2, messages), sh("echo \"$MASTER_ADDR $MASTER_PORT\" > " + dir.path.string() + "/$RANK"));
  REQUIRE(r.exit_code == 0);
  const std::string first = read_file(dir.file("0"));
  CHECK(first == read_file(dir.file("1")));
  REQUIRE(first.starts_with("127.0.0.1 "));
  const int port = std::stoi(first.substr(10));
  CHECK(port > 0);
  CHECK(port <= 65535);
  CHECK(ingot::parallel::pick_free_port("127.0.0.1") > 0);
  require_no_children();
}

TEST_CASE("launch: OMP_NUM_THREADS is cores per rank or the caller's or threads_per_rank", "[parallel][launcher]") {
  TempDir dir;
  std::vector<std::string> messages;
  const auto threads_seen = [&](LaunchOptions o) {
    REQUIRE(launch(o, sh("echo $OMP_NUM_THREADS > " + dir.file("omp"))).exit_code == 0);
    return std::stoi(read_file(dir.file("omp")));
  };
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  const int cores = CPU_COUNT(&set);

  LaunchOptions o = options(1, messages);
  o.environment = environment_without("OMP_NUM_THREADS");
  CHECK(threads_seen(o) == cores);
  o.nproc_per_node = cores * 2;  // more ranks than cores: at least one thread each
  CHECK(threads_seen(o) == 1);
  o.nproc_per_node = 1;
  o.environment->push_back("OMP_NUM_THREADS=7");
  CHECK(threads_seen(o) == 7);
  o.threads_per_rank = 3;
  CHECK(threads_seen(o) == 3);
  require_no_children();
}

TEST_CASE("launch: a rank that exits non-zero stops the others and the launch exits with its code",
          "[parallel][launcher]") {
  std::vector<std::string> messages;
  LaunchOptions o = options(3, messages);
  o.stop_timeout = std::chrono::seconds(20);
  const auto start = std::chrono::steady_clock::now();
  const LaunchResult r = launch(o, sh("if [ $RANK = 1 ]; then exit 3; fi; exec sleep 60"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 15);  // not the 60 s sleep, nor the 20 s grace: the SIGTERM stopped them
  CHECK(r.exit_code == 3);
  REQUIRE(r.ranks.size() == 3);
  CHECK(r.ranks[1].exit_code == 3);
  CHECK(r.ranks[0].signal == SIGTERM);
  CHECK(r.ranks[2].signal == SIGTERM);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] ==
        fmt::format("ingot launch: rank 1 (pid {}) exited with code 3; stopping the other ranks", r.ranks[1].pid));
  CHECK(r.first_failure == messages[0]);
  require_no_children();
}

TEST_CASE("launch: a rank killed by SIGKILL makes the launch exit 137 and is named", "[parallel][launcher]") {
  std::vector<std::string> messages;
  const LaunchResult r = launch(options(2, messages), sh("if [ $RANK = 1 ]; then kill -KILL $$; fi; exec sleep 60"));
  CHECK(r.exit_code == 137);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[1].signal == SIGKILL);
  CHECK(r.ranks[0].signal == SIGTERM);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == fmt::format("ingot launch: rank 1 (pid {}) was killed by signal 9 (SIGKILL); stopping the "
                                   "other ranks",
                                   r.ranks[1].pid));
  require_no_children();
}

TEST_CASE("launch: a rank that ignores SIGTERM is sent SIGKILL after stop_timeout", "[parallel][launcher]") {
  TempDir dir;
  std::vector<std::string> messages;
  LaunchOptions o = options(2, messages);
  o.stop_timeout = std::chrono::milliseconds(300);
  const std::string ready = dir.file("ready");
  // Rank 1 fails only once rank 0 ignores SIGTERM.
  const LaunchResult r =
      launch(o, sh("if [ $RANK = 1 ]; then while [ ! -e " + ready + " ]; do sleep 0.01; done; exit 2; fi; " +
                   long_rank("trap '' TERM; touch " + ready)));
  CHECK(r.exit_code == 2);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].signal == SIGKILL);
  REQUIRE(messages.size() == 2);
  CHECK_THAT(messages[0], Contains("rank 1 (pid") && Contains("exited with code 2; stopping the other ranks"));
  CHECK(messages[1] == "ingot launch: rank(s) 0 still running 0.3 s after the stop; sending SIGKILL");
  require_no_children();
}

TEST_CASE("launch: SIGINT to the launcher is forwarded to every rank once and the launch exits 130",
          "[parallel][launcher]") {
  TempDir dir;
  std::vector<std::string> messages;
  const std::string d = dir.path.string();
  std::thread sender([&] {
    if (wait_for_files({d + "/ready0", d + "/ready1"})) kill(getpid(), SIGINT);
  });
  const LaunchResult r =
      launch(options(2, messages),
             sh(long_rank("trap 'echo int >> " + d + "/got$RANK; exit 5' INT; touch " + d + "/ready$RANK")));
  sender.join();
  CHECK(r.exit_code == 130);
  REQUIRE(r.ranks.size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    CHECK(read_file(d + "/got" + std::to_string(rank)) == "int\n");  // once, not twice
    CHECK(r.ranks[static_cast<size_t>(rank)].exit_code == 5);        // its own exit, no SIGKILL
  }
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "ingot launch: got SIGINT; forwarding it to the ranks (a second signal stops them at once)");
  require_no_children();
}

TEST_CASE("launch: a second signal to the launcher kills the ranks at once", "[parallel][launcher]") {
  TempDir dir;
  std::vector<std::string> messages;
  const std::string d = dir.path.string();
  LaunchOptions o = options(2, messages);
  o.stop_timeout = std::chrono::seconds(60);  // only the second signal can bring SIGKILL in time
  std::thread sender([&] {
    if (!wait_for_files({d + "/ready0", d + "/ready1"})) return;
    kill(getpid(), SIGTERM);
    if (wait_for_files({d + "/got0", d + "/got1"})) kill(getpid(), SIGINT);
  });
  // The ranks note SIGTERM and go on.
  const LaunchResult r =
      launch(o, sh(long_rank("trap 'echo term >> " + d + "/got$RANK' TERM; touch " + d + "/ready$RANK")));
  sender.join();
  CHECK(r.exit_code == 143);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].signal == SIGKILL);
  CHECK(r.ranks[1].signal == SIGKILL);
  REQUIRE(messages.size() == 2);
  CHECK_THAT(messages[0], Contains("got SIGTERM; forwarding it to the ranks"));
  CHECK(messages[1] == "ingot launch: second signal; sending SIGKILL to the ranks");
  require_no_children();
}

TEST_CASE("launch: invalid options and commands are ConfigErrors of one line", "[parallel][launcher]") {
  std::vector<std::string> messages;
  const auto refused = [&](LaunchOptions o, std::vector<std::string> argv, const std::string& what) {
    try {
      launch(o, argv);
      FAIL("launched: " << what);
    } catch (const ingot::ConfigError& e) {
      CHECK_THAT(e.what(), Contains(what));
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  };
  const std::vector<std::string> ok = {"/bin/true"};
  LaunchOptions o = options(0, messages);
  refused(o, ok, "nproc-per-node must be at least 1, got 0");
  o = options(1, messages);
  o.nnodes = 2;
  o.node_rank = 2;
  o.master_addr = "10.0.0.1";
  o.master_port = 29500;
  refused(o, ok, "node-rank must be in [0, 2) for 2 node(s), got 2");
  o.node_rank = 1;
  o.master_port = 0;
  refused(o, ok, "2 nodes need an explicit master-addr and master-port");
  o.master_port = 29500;
  o.master_addr.clear();
  refused(o, ok, "2 nodes need an explicit master-addr and master-port");
  o = options(1, messages);
  o.master_port = 70000;
  refused(o, ok, "master-port must be in 1..65535");
  o = options(1, messages);
  refused(o, {}, "no command to run");
  refused(o, {"/nonexistent/program"}, "cannot run '/nonexistent/program'");
  refused(o, {"ingot-no-such-program"}, "'ingot-no-such-program' is not in PATH");
  CHECK(messages.empty());
  require_no_children();
}

TEST_CASE("launch: a program that cannot be executed is refused and no rank is left behind", "[parallel][launcher]") {
  TempDir dir;
  const std::string bad = dir.file("not-a-program");
  std::ofstream(bad) << "\x7f"
                        "ELF this is not a program\n";
  REQUIRE(chmod(bad.c_str(), 0755) == 0);
  std::vector<std::string> messages;
  CHECK_THROWS_AS(launch(options(2, messages), {bad}), ingot::ConfigError);
  require_no_children();
  // A command found in PATH runs.
  CHECK(launch(options(2, messages), {"true"}).exit_code == 0);
  require_no_children();
}
