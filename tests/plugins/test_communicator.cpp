// The communicator component end to end: the fixture plugin "fixture_comm" loads, and groups of 2
// and 3 ranks (threads of this process sharing an InProcessKvStore) get exact all_reduce,
// broadcast, all_gather, reduce_scatter and barrier results; errors name the collective and rank.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/ops/creation.h"
#include "ingot/runtime/communicator.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/kv_store.h"
#include "ingot/runtime/plugin_loader.h"
#include "test_support.h"

namespace ingot {
namespace {

void load_fixture() {
  const PluginRecord rec =
      PluginLoader::instance().load_file(std::string(INGOT_COMM_FIXTURE_DIR) + "/libfixture_comm.so");
  INFO(rec.reason);
  REQUIRE(rec.available);
  REQUIRE(rec.communicators == std::vector<std::string>{"fixture_kv"});
}

// Runs body(comm) for ranks 0 .. world - 1 as threads sharing one store; rethrows the first failure.
void run_ranks(int world, const std::function<void(Communicator&)>& body) {
  InProcessKvStore store;
  test::run_threads(world, [&](int r) {
    Communicator comm("fixture_kv", r, world, store);
    body(comm);
  });
}

// Rank r's data: element i is (r + 1) * 10 + i (exact in every dtype used here).
Tensor rank_data(int rank, int64_t n, DType dtype = DType::F32) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = (rank + 1) * 10.0 + static_cast<double>(i);
  return Tensor::from_vector(v, Shape{n}).to(dtype);
}

std::vector<double> values(const Tensor& t) { return t.to(DType::F64).to_vector<double>(); }

TEST_CASE("kv store: set wakes a waiting get, a missing key times out naming it", "[plugins][communicator]") {
  InProcessKvStore store;
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    store.set("k", "v1");
  });
  CHECK(store.get("k", std::chrono::milliseconds(5000)) == "v1");
  writer.join();
  CHECK(store.try_get("k") == std::optional<std::string>("v1"));
  CHECK_FALSE(store.try_get("other").has_value());
  REQUIRE_THROWS_AS(store.get("other", std::chrono::milliseconds(10)), TimeoutError);
  REQUIRE_THROWS_WITH(store.get("other", std::chrono::milliseconds(10)), Catch::Contains("'other'"));
}

TEST_CASE("communicator: the fixture plugin registers its component", "[plugins][communicator]") {
  load_fixture();
  const CommunicatorComponent* c = CommunicatorRegistry::instance().find("fixture_kv");
  REQUIRE(c != nullptr);
  CHECK(c->plugin == "fixture_comm");
  CHECK(c->device_kind == DeviceKind::CPU);
  const PluginRecord* rec = PluginLoader::instance().find("fixture_comm");
  REQUIRE(rec != nullptr);
  CHECK(rec->kinds == INGOT_KIND_COMMUNICATOR);
  CHECK(rec->backends.empty());
  REQUIRE_THROWS_WITH(CommunicatorRegistry::instance().get("nccl"),
                      Catch::Contains("no communicator named 'nccl'") && Catch::Contains("fixture_kv"));
}

TEST_CASE("communicator: all_reduce sum / avg / max / min, in place and out of place", "[plugins][communicator]") {
  load_fixture();
  for (const int world : {2, 3}) {
    INFO("world " << world);
    run_ranks(world, [world](Communicator& comm) {
      const int r = comm.rank();
      CHECK(comm.world_size() == world);
      const int64_t n = 5;
      std::vector<double> sum(n), mx(n), mn(n);
      for (int64_t i = 0; i < n; ++i) {
        for (int q = 0; q < world; ++q) sum[i] += (q + 1) * 10.0 + static_cast<double>(i);
        mx[i] = world * 10.0 + static_cast<double>(i);
        mn[i] = 10.0 + static_cast<double>(i);
      }
      for (const DType dt : {DType::F32, DType::F64, DType::I32, DType::I64}) {
        const Tensor x = rank_data(r, n, dt);
        Tensor y = Tensor::empty({n}, dt);
        comm.all_reduce(x, y, ReduceOp::Sum);
        CHECK(values(y) == sum);
        comm.all_reduce(x, y, ReduceOp::Max);
        CHECK(values(y) == mx);
        comm.all_reduce(x, y, ReduceOp::Min);
        CHECK(values(y) == mn);
      }
      Tensor z = rank_data(r, n, DType::F64);
      comm.all_reduce(z, ReduceOp::Avg);  // in place
      std::vector<double> avg(n);
      for (int64_t i = 0; i < n; ++i) avg[i] = sum[i] / world;
      CHECK(values(z) == avg);
    });
  }
}

TEST_CASE("communicator: broadcast from every root", "[plugins][communicator]") {
  load_fixture();
  for (const int world : {2, 3}) {
    run_ranks(world, [world](Communicator& comm) {
      for (int root = 0; root < world; ++root) {
        Tensor t = rank_data(comm.rank(), 4);
        comm.broadcast(t, root);
        CHECK(values(t) == values(rank_data(root, 4)));
        Tensor out = zeros({2, 2});
        comm.broadcast(rank_data(comm.rank(), 4), out, root);
        CHECK(values(out) == values(rank_data(root, 4)));
      }
    });
  }
}

TEST_CASE("communicator: all_gather and reduce_scatter", "[plugins][communicator]") {
  load_fixture();
  for (const int world : {2, 3}) {
    run_ranks(world, [world](Communicator& comm) {
      const int r = comm.rank();
      Tensor gathered = Tensor::empty({static_cast<int64_t>(world) * 3});
      comm.all_gather(rank_data(r, 3), gathered);
      std::vector<double> expected;
      for (int q = 0; q < world; ++q)
        for (double v : values(rank_data(q, 3))) expected.push_back(v);
      CHECK(values(gathered) == expected);

      // Rank q contributes (q + 1) * 10 + i over world * 2 elements; rank r keeps elements [2r, 2r + 2).
      Tensor part = Tensor::empty({2}, DType::I64);
      comm.reduce_scatter(rank_data(r, world * 2, DType::I64), part, ReduceOp::Sum);
      std::vector<double> mine(2);
      for (int64_t i = 0; i < 2; ++i)
        for (int q = 0; q < world; ++q) mine[i] += (q + 1) * 10.0 + static_cast<double>(2 * r + i);
      CHECK(values(part) == mine);
    });
  }
}

TEST_CASE("communicator: barrier holds every rank until the last arrives", "[plugins][communicator]") {
  load_fixture();
  for (const int world : {2, 3}) {
    std::atomic<int> arrived{0};
    std::atomic<int> early{0};
    run_ranks(world, [&](Communicator& comm) {
      if (comm.rank() == world - 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      arrived++;
      comm.barrier();
      if (arrived.load() != world) early++;
    });
    CHECK(early.load() == 0);
  }
}

TEST_CASE("communicator: send and recv pass tensors between ranks in order", "[plugins][communicator]") {
  load_fixture();
  for (const int world : {2, 3}) {
    run_ranks(world, [&](Communicator& comm) {
      REQUIRE(comm.can_send());
      const int next = (comm.rank() + 1) % world, prev = (comm.rank() + world - 1) % world;
      // A ring: everyone sends two messages to the next rank, then receives two from the previous.
      comm.send(rank_data(comm.rank(), 5), next);
      comm.send(rank_data(comm.rank() + 10, 5), next);
      Tensor first = zeros({5}), second = zeros({5});
      comm.recv(first, prev);
      comm.recv(second, prev);
      CHECK(values(first) == values(rank_data(prev, 5)));
      CHECK(values(second) == values(rank_data(prev + 10, 5)));
      REQUIRE_THROWS_WITH(comm.send(zeros({1}), comm.rank()), Catch::Contains("is not another rank"));
    });
  }
}

TEST_CASE("communicator: errors name the communicator, the rank and the collective", "[plugins][communicator]") {
  load_fixture();
  run_ranks(1, [](Communicator& comm) {
    REQUIRE_THROWS_WITH(
        comm.all_gather(zeros({3}), zeros({4})),
        Catch::Contains("communicator fixture_kv (plugin fixture_comm), rank 0 of 1") && Catch::Contains("all_gather"));
    REQUIRE_THROWS_WITH(comm.all_reduce(zeros({4}).expand({2, 4}), zeros({2, 4})), Catch::Contains("contiguous"));
    REQUIRE_THROWS_WITH(comm.all_reduce(zeros({2}, DType::F16), zeros({2}, DType::F16)),
                        Catch::Contains("all_reduce") && Catch::Contains("f32, f64, i32 and i64 only"));
    REQUIRE_THROWS_WITH(comm.broadcast(zeros({2}), 1), Catch::Contains("root 1 is not a rank"));
  });
  InProcessKvStore store;
  REQUIRE_THROWS_WITH(Communicator("fixture_kv", 2, 2, store), Catch::Contains("rank 2 is outside a world of 2"));
  REQUIRE_THROWS_WITH(Communicator("fixture_kv", 0, 1, store, Device{DeviceKind::CUDA, 0}),
                      Catch::Contains("exchanges tensors on cpu devices"));
}

}  // namespace
}  // namespace ingot
