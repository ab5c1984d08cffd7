// Multi-process test cases: spawn the test executable once per rank, filtered to the current test
// case, with the launch variables set; collect exit codes and output.
#include "rank_processes.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace ingot::test {

namespace {

constexpr const char* kMarker = "INGOT_TEST_RANK_PROCESS";

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

bool in_rank_process() { return std::getenv(kMarker) != nullptr; }

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

std::vector<int> run_ranks_collect(int world, std::string& output, const RanksOptions& options) {
  if (in_rank_process()) return {};
  const std::string test = Catch::getResultCapture().getCurrentTestName();
  const int port = free_port();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ingot-ranks-" + std::to_string(::getpid()) + "-" + std::to_string(port));
  std::filesystem::create_directories(dir);
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string v = *e;
      for (const char* drop : {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=",
                               "MASTER_PORT=", "OMP_NUM_THREADS="})
        if (v.rfind(drop, 0) == 0) goto skip;
      env.push_back(v);
    skip:;
    }
    for (const std::string& v :
         {"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(world), "LOCAL_RANK=" + std::to_string(r),
          "LOCAL_WORLD_SIZE=" + std::to_string(world), std::string("MASTER_ADDR=127.0.0.1"),
          "MASTER_PORT=" + std::to_string(port), std::string("OMP_NUM_THREADS=1"), std::string(kMarker) + "=1"})
      env.push_back(v);
    for (const std::string& v : options.env) env.push_back(v);
    const std::string out = (dir / ("rank" + std::to_string(r) + ".log")).string();
    // The test case alone (Catch's filter characters escaped); a filter that matches nothing
    // fails (-w NoTests) instead of passing with no test run.
    std::string filter;
    for (const char c : test) {
      if (std::strchr(",[]*~\\", c) != nullptr) filter += '\\';
      filter += c;
    }
    std::vector<std::string> args = {"/proc/self/exe", filter, "-w", "NoTests"};
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(rc == 0);
    pids.push_back(pid);
  }
  std::vector<int> codes(static_cast<size_t>(world), -1);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int left = world;
  bool timed_out = false;
  while (left > 0) {
    for (int r = 0; r < world; ++r) {
      if (codes[r] != -1) continue;
      int status = 0;
      if (::waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --left;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline && !timed_out) {
      timed_out = true;
      for (int r = 0; r < world; ++r)
        if (codes[r] == -1) ::kill(pids[r], SIGKILL);
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  output.clear();
  for (int r = 0; r < world; ++r)
    output += "---- rank " + std::to_string(r) + " (exit " + std::to_string(codes[r]) + ") ----\n" +
              read_file(dir / ("rank" + std::to_string(r) + ".log"));
  if (timed_out) output += "---- killed after " + std::to_string(options.timeout.count()) + " s ----\n";
  std::filesystem::remove_all(dir);
  return codes;
}

bool run_as_ranks(int world, const RanksOptions& options) {
  if (in_rank_process()) return true;
  std::string output;
  const std::vector<int> codes = run_ranks_collect(world, output, options);
  bool ok = true;
  for (int c : codes) ok = ok && c == 0;
  INFO(output);
  REQUIRE(ok);
  return false;
}

}  // namespace ingot::test
