// The launch variables and the TCP key-value store: DistEnv reads torchrun's, Open MPI's and
// Slurm's variables and names a bad one; the store serves set / get / try_get across processes
// (2 and 3 ranks) and a get that waits for a later set; a missing key times out naming it, a
// vanished server and an unreachable one are one clear error each.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <thread>

#include "ingot/base/error.h"
#include "ingot/parallel/dist_env.h"
#include "ingot/parallel/tcp_kv_store.h"
#include "rank_processes.h"

namespace ingot::parallel {
namespace {

using std::chrono::milliseconds;

// Sets environment variables for the scope, restoring the launch variables after.
struct EnvScope {
  explicit EnvScope(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* n : kNames) {
      const char* v = std::getenv(n);
      saved.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(n);
    }
    for (const auto& [n, v] : vars) ::setenv(n, v, 1);
  }
  ~EnvScope() {
    for (const char* n : kNames) ::unsetenv(n);
    for (const auto& [n, v] : saved)
      if (v) ::setenv(n.c_str(), v->c_str(), 1);
  }
  static constexpr const char* kNames[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                                           "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                           "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_PROCID",
                                           "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
};

TEST_CASE("dist env: none of the variables means a single process", "[parallel]") {
  const EnvScope env({});
  CHECK_FALSE(dist_env_from_environment().has_value());
}

TEST_CASE("dist env: torchrun variables, then Open MPI's, then Slurm's", "[parallel]") {
  {
    const EnvScope env({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                        {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"}, {"SLURM_PROCID", "0"}});
    const auto d = dist_env_from_environment();
    REQUIRE(d);
    CHECK(d->rank == 3);
    CHECK(d->world_size == 4);
    CHECK(d->local_rank == 1);
    CHECK(d->local_world_size == 2);
    CHECK(d->master_addr == "node7");
    CHECK(d->master_port == 29500);
    CHECK(d->source == "torchrun variables");
  }
  {
    const EnvScope env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"MASTER_PORT", "1234"}});
    const auto d = dist_env_from_environment();
    REQUIRE(d);
    CHECK(d->rank == 1);
    CHECK(d->world_size == 2);
    CHECK(d->source == "Open MPI");
    CHECK(d->master_addr == "127.0.0.1");
  }
  {
    const EnvScope env({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                        {"SLURM_NTASKS_PER_NODE", "4(x2)"}, {"MASTER_PORT", "1234"}});
    const auto d = dist_env_from_environment();
    REQUIRE(d);
    CHECK(d->rank == 5);
    CHECK(d->local_rank == 1);
    CHECK(d->source == "Slurm");
  }
}

TEST_CASE("dist env: a bad or missing variable is one error naming it", "[parallel]") {
  {
    const EnvScope env({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}});
    REQUIRE_THROWS_WITH(dist_env_from_environment(), Catch::Contains("RANK=2") && Catch::Contains("[0, 1]"));
  }
  {
    const EnvScope env({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
    REQUIRE_THROWS_AS(dist_env_from_environment(), ConfigError);
    REQUIRE_THROWS_WITH(dist_env_from_environment(), Catch::Contains("MASTER_PORT is not set"));
  }
  {
    const EnvScope env({{"RANK", "0"}, {"WORLD_SIZE", "two"}, {"MASTER_PORT", "1"}});
    REQUIRE_THROWS_WITH(dist_env_from_environment(), Catch::Contains("WORLD_SIZE=two"));
  }
  {
    const EnvScope env({{"WORLD_SIZE", "2"}});
    REQUIRE_THROWS_WITH(dist_env_from_environment(), Catch::Contains("RANK is not"));
  }
}

TEST_CASE("tcp kv store: set, a get that waits for a later set, try_get, a timeout naming the key", "[parallel]") {
  TcpKvStore server("127.0.0.1", 0, true, milliseconds(5000));
  TcpKvStore client("127.0.0.1", server.port(), false, milliseconds(5000));
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    client.set("late", std::string("v\0w", 3));
  });
  CHECK(server.get("late", milliseconds(5000)) == std::string("v\0w", 3));
  writer.join();
  server.set("big", std::string(3 << 20, 'x'));
  CHECK(client.get("big", milliseconds(1000)).size() == (3u << 20));
  CHECK(client.try_get("late") == std::optional<std::string>(std::string("v\0w", 3)));
  CHECK_FALSE(client.try_get("nothing").has_value());
  REQUIRE_THROWS_AS(client.get("nothing", milliseconds(20)), TimeoutError);
  REQUIRE_THROWS_WITH(client.get("nothing", milliseconds(20)), Catch::Contains("'nothing'"));
}

TEST_CASE("tcp kv store: no server within the timeout is one error naming the address", "[parallel]") {
  const int port = test::free_port();
  REQUIRE_THROWS_WITH(TcpKvStore("127.0.0.1", port, false, milliseconds(200)),
                      Catch::Contains("127.0.0.1:" + std::to_string(port)) && Catch::Contains("did rank 0 start"));
}

TEST_CASE("tcp kv store: a client waiting when the server stops gets an error, not a hang", "[parallel]") {
  auto server = std::make_unique<TcpKvStore>("127.0.0.1", 0, true, milliseconds(5000));
  TcpKvStore client("127.0.0.1", server->port(), false, milliseconds(5000));
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    server.reset();
  });
  REQUIRE_THROWS_WITH(client.get("never", milliseconds(-1)), Catch::Contains("rank 0 has stopped"));
  stopper.join();
}

TEST_CASE("tcp kv store: ranks in separate processes exchange values", "[parallel]") {
  for (const int world : {2, 3}) {
    if (!test::run_as_ranks(world)) continue;
    const auto d = dist_env_from_environment();
    REQUIRE(d);
    TcpKvStore store(d->master_addr, d->master_port, d->rank == 0, milliseconds(10000));
    store.set("from/" + std::to_string(d->rank), "hello " + std::to_string(d->rank));
    for (int r = 0; r < d->world_size; ++r)
      CHECK(store.get("from/" + std::to_string(r), milliseconds(10000)) == "hello " + std::to_string(r));
    // Rank 0 serves: it leaves last, once everyone has read.
    store.set("done/" + std::to_string(d->rank), "");
    if (d->rank == 0)
      for (int r = 0; r < d->world_size; ++r) store.get("done/" + std::to_string(r), milliseconds(10000));
    return;
  }
}

}  // namespace
}  // namespace ingot::parallel
