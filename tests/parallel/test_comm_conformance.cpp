// Communicator conformance: every communicator available here ("fixture_kv", and "gloo" where its
// plugin is built) runs each collective as groups of 2 and 3 rank processes, with exact expected
// values for every dtype it claims; misuse is refused with a clear message, and (gloo) a rank
// whose peer process died gets an error naming the failure instead of hanging.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/ops/creation.h"
#include "ingot/parallel/dist_env.h"
#include "ingot/parallel/tcp_kv_store.h"
#include "ingot/runtime/communicator.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/plugin_loader.h"
#include "rank_processes.h"
#include "test_support.h"

namespace ingot {
namespace {

using namespace std::chrono_literals;

// ---- the communicators and what they claim ---------------------------------------------------

struct CommSpec {
  std::string name;
  std::string plugin_file;
  std::vector<DType> dtypes;  ///< what all_reduce / reduce_scatter reduce
  bool large = false;         ///< runs the 16M-element (64 MiB) all_reduce
  DType refused;              ///< a dtype all_reduce refuses
  bool names_refused = false; ///< the refusal names that dtype
};

const std::vector<CommSpec>& specs() {
  static const std::vector<CommSpec> all = {
      {"fixture_kv", std::string(INGOT_COMM_FIXTURE_DIR) + "/libfixture_comm.so",
       {DType::F32, DType::F64, DType::I32, DType::I64}, false, DType::F16, false},
#ifdef INGOT_GLOO_PLUGIN
      {"gloo", INGOT_GLOO_PLUGIN,
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8, DType::I8}, true,
       DType::Bool, true},
#endif
  };
  return all;
}

// Loads the communicator's plugin; "" when its component is registered, else why not.
std::string load(const CommSpec& s) {
  if (CommunicatorRegistry::instance().find(s.name) != nullptr) return "";
  if (!std::filesystem::exists(s.plugin_file)) return s.plugin_file + " is not built";
  const PluginRecord rec = PluginLoader::instance().load_file(s.plugin_file);
  if (!rec.available) return rec.reason;
  return CommunicatorRegistry::instance().find(s.name) != nullptr ? "" : "its plugin registered no " + s.name;
}

// The communicators to test here: fixture_kv always, gloo where its plugin is built and loads.
std::vector<CommSpec> available() {
  std::vector<CommSpec> out;
  for (const CommSpec& s : specs()) {
    const std::string why = load(s);
    if (s.name == "fixture_kv") {
      INFO(why);
      REQUIRE(why.empty());
    }
    if (why.empty())
      out.push_back(s);
    else
      std::cout << "note: communicator " << s.name << " not tested: " << why << std::endl;
  }
#ifndef INGOT_GLOO_PLUGIN
  std::cout << "note: communicator gloo not tested: the gloo_ddp plugin is not built (libgloo-dev missing)"
            << std::endl;
#endif
  return out;
}

const CommSpec* available_spec(const std::string& name) {
  static const std::vector<CommSpec> here = available();
  for (const CommSpec& s : here)
    if (s.name == name) return &s;
  return nullptr;
}

// The ranks' combined output with every run of white space made one space (Catch wraps long
// messages), to search for a phrase.
std::string flat(const std::string& output) {
  std::string out;
  for (const char c : output) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return out;
}

constexpr const char* kCommEnv = "INGOT_TEST_COMMUNICATOR";

using Body = std::function<void(Communicator&, const CommSpec&, KvStore&)>;

// In a rank process: joins the group of the communicator named in the environment over a
// TcpKvStore, runs body, and ends with a barrier.
void run_rank(const Body& body) {
  const char* name = std::getenv(kCommEnv);
  REQUIRE(name != nullptr);
  const CommSpec* s = available_spec(name);
  REQUIRE(s != nullptr);
  const auto d = parallel::dist_env_from_environment();
  REQUIRE(d);
  parallel::TcpKvStore store(d->master_addr, d->master_port, d->rank == 0, 10s);
  Communicator comm(s->name, d->rank, d->world_size, store);
  body(comm, *s, store);
  comm.barrier();
  // Rank 0 serves the store: it leaves once every rank is done with it (fixture_kv's barrier
  // reads the store after rank 0 may have passed it). The server may stop before it acknowledges
  // the last "done" it stored, so the other ranks ignore an error there.
  if (d->rank == 0) {
    for (int q = 1; q < d->world_size; ++q) store.get("done/" + std::to_string(q), 30s);
  } else {
    try {
      store.set("done/" + std::to_string(d->rank), "");
    } catch (const Error&) {
    }
  }
}

// Rank processes of communicator `name`, whose collectives give up after `timeout_s` seconds.
test::RanksOptions options_for(const std::string& name, const std::string& timeout_s = "30") {
  test::RanksOptions o;
  o.env = {std::string(kCommEnv) + "=" + name, "INGOT_COMM_TIMEOUT_S=" + timeout_s};
  return o;
}

// In the test process: runs the current case as groups of 2 and 3 rank processes for every
// available communicator; in a rank process: runs body as that rank.
void on_every_group(const Body& body) {
  if (test::in_rank_process()) return run_rank(body);
  for (const CommSpec& s : available())
    for (const int world : {2, 3}) {
      INFO("communicator " << s.name << ", " << world << " processes");
      test::run_as_ranks(world, options_for(s.name));
    }
}

// ---- data ------------------------------------------------------------------------------------

// Rank r's element i: world * (i % 5) + 2r + 1. Sums over the ranks are multiples of world (so
// every average is exact) and at most 51 for three ranks: exact in every dtype, int8 included.
double value(int r, int world, int64_t i) { return world * static_cast<double>(i % 5) + 2.0 * r + 1.0; }

Tensor rank_data(int r, int world, int64_t n, DType dtype) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = value(r, world, i);
  return Tensor::from_vector(v, Shape{n}).to(dtype);
}

std::vector<double> values(const Tensor& t) { return t.to(DType::F64).to_vector<double>(); }

// The expected reduction over every rank of elements first .. first + n.
std::vector<double> reduced(ReduceOp op, int world, int64_t first, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int r = 0; r < world; ++r) sum += value(r, world, first + i);
    switch (op) {
      case ReduceOp::Sum: out[i] = sum; break;
      case ReduceOp::Avg: out[i] = sum / world; break;
      case ReduceOp::Max: out[i] = value(world - 1, world, first + i); break;
      case ReduceOp::Min: out[i] = value(0, world, first + i); break;
    }
  }
  return out;
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
  }
  return "?";
}

constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min};

// ---- the collectives -------------------------------------------------------------------------

TEST_CASE("comm conformance: all_reduce sum avg max min for every claimed dtype at 1 and 1000 elements",
          "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec& s, KvStore&) {
    const int r = comm.rank(), w = comm.world_size();
    for (const DType dt : s.dtypes)
      for (const int64_t n : {int64_t{1}, int64_t{1000}})
        for (const ReduceOp op : kOps) {
          INFO(dtype_name(dt) << ", " << n << " elements, " << op_name(op));
          Tensor out = Tensor::empty({n}, dt);
          comm.all_reduce(rank_data(r, w, n, dt), out, op);
          CHECK(values(out) == reduced(op, w, 0, n));
        }
    // Integer averages truncate: (1 + 2) / 2 is 1.
    Tensor t = Tensor::from_vector(std::vector<double>{r + 1.0}, Shape{1}).to(DType::I32);
    comm.all_reduce(t, ReduceOp::Avg);
    CHECK(values(t) == std::vector<double>{static_cast<double>((w * (w + 1) / 2) / w)});
    if (!s.large) return;
    // 16M float32 elements (64 MiB), summed in place.
    const int64_t n = int64_t{1} << 24;
    Tensor big = Tensor::empty({n}, DType::F32);
    float* p = big.data<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(value(r, w, i));
    comm.all_reduce(big, ReduceOp::Sum);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
      wrong += p[i] != static_cast<float>(w * w * static_cast<double>(i % 5) + w * w) ? 1 : 0;
    CHECK(wrong == 0);
  });
}

TEST_CASE("comm conformance: all_reduce in place for every claimed dtype", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec& s, KvStore&) {
    const int r = comm.rank(), w = comm.world_size();
    for (const DType dt : s.dtypes)
      for (const ReduceOp op : kOps) {
        INFO(dtype_name(dt) << ", " << op_name(op));
        Tensor t = rank_data(r, w, 37, dt);
        comm.all_reduce(t, op);
        CHECK(values(t) == reduced(op, w, 0, 37));
      }
  });
}

TEST_CASE("comm conformance: broadcast from each root in place and out of place", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec& s, KvStore&) {
    const int r = comm.rank(), w = comm.world_size();
    for (const DType dt : s.dtypes)
      for (int root = 0; root < w; ++root) {
        INFO(dtype_name(dt) << ", root " << root);
        Tensor t = rank_data(r, w, 1000, dt);
        comm.broadcast(t, root);
        CHECK(values(t) == values(rank_data(root, w, 1000, dt)));
        Tensor out = zeros({10, 100}, dt);
        comm.broadcast(rank_data(r, w, 1000, dt), out, root);
        CHECK(values(out) == values(rank_data(root, w, 1000, dt)));
      }
  });
}

TEST_CASE("comm conformance: all_gather concatenates every rank in rank order", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec& s, KvStore&) {
    const int r = comm.rank(), w = comm.world_size();
    for (const DType dt : s.dtypes) {
      INFO(dtype_name(dt));
      std::vector<double> expected;
      for (int q = 0; q < w; ++q) {
        const std::vector<double> part = values(rank_data(q, w, 7, dt));
        expected.insert(expected.end(), part.begin(), part.end());
      }
      Tensor out = Tensor::empty({w, 7}, dt);
      comm.all_gather(rank_data(r, w, 7, dt), out);
      CHECK(values(out) == expected);
      // The input may be this rank's row of the output.
      Tensor inplace = zeros({w, 7}, dt);
      inplace.select(0, r).copy_(rank_data(r, w, 7, dt));
      comm.all_gather(inplace.select(0, r), inplace);
      CHECK(values(inplace) == expected);
    }
  });
}

TEST_CASE("comm conformance: reduce_scatter gives each rank its reduced chunk", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec& s, KvStore&) {
    const int r = comm.rank(), w = comm.world_size();
    const int64_t n = 11;
    for (const DType dt : s.dtypes)
      for (const ReduceOp op : kOps) {
        INFO(dtype_name(dt) << ", " << op_name(op));
        Tensor out = Tensor::empty({n}, dt);
        comm.reduce_scatter(rank_data(r, w, n * w, dt), out, op);
        CHECK(values(out) == reduced(op, w, n * r, n));
      }
  });
}

TEST_CASE("comm conformance: barrier returns only once every rank has arrived", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec&, KvStore& store) {
    const int w = comm.world_size();
    for (int round = 0; round < 3; ++round) {
      store.set("arrived/" + std::to_string(round) + "/" + std::to_string(comm.rank()), "");
      comm.barrier();
      for (int q = 0; q < w; ++q) {
        INFO("round " << round << ", rank " << q);
        CHECK(store.try_get("arrived/" + std::to_string(round) + "/" + std::to_string(q)).has_value());
      }
    }
  });
}

TEST_CASE("comm conformance: send and recv around a ring with two messages in a row", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec& s, KvStore&) {
    const int r = comm.rank(), w = comm.world_size();
    const int next = (r + 1) % w, prev = (r + w - 1) % w;
    for (const DType dt : s.dtypes) {
      INFO(dtype_name(dt));
      // Every rank sends both messages before it receives: a send must not wait for its recv.
      comm.send(rank_data(r, w, 1000, dt), next);
      comm.send(full({3}, r + 1.0, dt), next);
      Tensor first = Tensor::empty({1000}, dt), second = Tensor::empty({3}, dt);
      comm.recv(first, prev);
      comm.recv(second, prev);
      CHECK(values(first) == values(rank_data(prev, w, 1000, dt)));
      CHECK(values(second) == std::vector<double>(3, prev + 1.0));
    }
  });
}

// ---- misuse ----------------------------------------------------------------------------------

TEST_CASE("comm conformance: a non-contiguous tensor is refused before any exchange", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec&, KvStore&) {
    const Tensor x = rank_data(comm.rank(), comm.world_size(), 12, DType::F32).view({3, 4}).transpose(0, 1);
    REQUIRE_FALSE(x.is_contiguous());
    REQUIRE_THROWS_WITH(comm.all_reduce(x), Catch::Contains("all_reduce") && Catch::Contains("contiguous"));
    REQUIRE_THROWS_WITH(comm.broadcast(x, 0), Catch::Contains("broadcast") && Catch::Contains("contiguous"));
    // The group still works afterwards.
    Tensor y = rank_data(comm.rank(), comm.world_size(), 12, DType::F32);
    comm.all_reduce(y);
    CHECK(values(y) == reduced(ReduceOp::Sum, comm.world_size(), 0, 12));
  });
}

TEST_CASE("comm conformance: an unsupported dtype is refused naming it", "[parallel][comm]") {
  on_every_group([](Communicator& comm, const CommSpec& s, KvStore&) {
    const Tensor t = full({4}, 1.0, s.refused);
    const std::string dtype(dtype_name(s.refused));
    INFO(s.name << " refusing " << dtype);
    try {
      comm.all_reduce(t);
      FAIL("all_reduce accepted " << dtype);
    } catch (const Error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("all_reduce") != std::string::npos);
      CHECK(msg.find(s.name) != std::string::npos);
      if (s.names_refused) CHECK(msg.find(dtype) != std::string::npos);
    }
    if (s.names_refused)
      REQUIRE_THROWS_WITH(comm.reduce_scatter(full({4 * comm.world_size()}, 1.0, s.refused), t),
                          Catch::Contains("reduce_scatter") && Catch::Contains(dtype));
  });
}

// ---- a dead peer -----------------------------------------------------------------------------

TEST_CASE("comm conformance: gloo ranks get an error naming the failure when a peer process exits",
          "[parallel][comm]") {
  if (!test::in_rank_process()) {
    if (available_spec("gloo") == nullptr) return test::skip("the gloo communicator is not available here");
    for (const int world : {2, 3}) {
      std::string output;
      test::RanksOptions o = options_for("gloo");
      o.timeout = 90s;  // far beyond the 30 s collective timeout: reaching it means a hang
      const std::vector<int> codes = test::run_ranks_collect(world, output, o);
      INFO(output);
      REQUIRE(codes.size() == static_cast<size_t>(world));
      CHECK(codes[world - 1] == 3);
      for (int r = 0; r + 1 < world; ++r) {
        CHECK(codes[r] != 0);
        CHECK(codes[r] < 128);  // exited with an error; not killed, not a signal
      }
      CHECK(output.find("killed after") == std::string::npos);
      CHECK(flat(output).find("all_reduce: gloo all_reduce failed: a peer rank stopped or is unreachable") !=
            std::string::npos);
    }
    return;
  }
  const auto d = parallel::dist_env_from_environment();
  REQUIRE(d);
  REQUIRE(available_spec("gloo") != nullptr);
  parallel::TcpKvStore store(d->master_addr, d->master_port, d->rank == 0, 10s);
  Communicator comm("gloo", d->rank, d->world_size, store);
  comm.barrier();  // every connection is up
  if (d->rank == d->world_size - 1) std::_Exit(3);
  Tensor t = full({1000}, 1.0);
  comm.all_reduce(t);  // throws: rank world - 1 is gone
  FAIL("all_reduce returned although rank " << d->world_size - 1 << " had exited");
}

TEST_CASE("comm conformance: gloo ranks time out naming the collective when a peer never makes the call",
          "[parallel][comm]") {
  if (!test::in_rank_process()) {
    if (available_spec("gloo") == nullptr) return test::skip("the gloo communicator is not available here");
    std::string output;
    const test::RanksOptions o = options_for("gloo", "1");
    const std::vector<int> codes = test::run_ranks_collect(2, output, o);
    INFO(output);
    REQUIRE(codes.size() == 2u);
    CHECK(codes[0] != 0);
    CHECK(codes[0] < 128);
    CHECK(output.find("killed after") == std::string::npos);
    CHECK(flat(output).find("all_reduce: gloo all_reduce timed out (INGOT_COMM_TIMEOUT_S)") != std::string::npos);
    return;
  }
  const auto d = parallel::dist_env_from_environment();
  REQUIRE(d);
  REQUIRE(available_spec("gloo") != nullptr);
  parallel::TcpKvStore store(d->master_addr, d->master_port, d->rank == 0, 10s);
  Communicator comm("gloo", d->rank, d->world_size, store);
  if (d->rank == 1) {
    // Never calls all_reduce; stays alive until rank 0 has failed (its store then closes).
    REQUIRE_THROWS(store.get("never set", 60s));
    return;
  }
  store.linger(0ms);  // on its error, rank 0 leaves without waiting for rank 1 to disconnect
  Tensor t = full({1000}, 1.0);
  comm.all_reduce(t);  // throws after INGOT_COMM_TIMEOUT_S
  FAIL("all_reduce returned although rank 1 never called it");
}

}  // namespace
}  // namespace ingot
