// The DDP gradient reducer, with 2 and 3 processes: after one backward of each rank's slice of a
// global batch, every parameter's gradient equals the single-process gradient of the whole batch
// (within 1e-6 relative); buckets follow reverse registration order under the size cap, and are
// launched while backward still runs; no_sync micro-batches accumulate locally and the last one
// reduces; a parameter backward never reached is an error naming it, or a zero contribution with
// find_unused_parameters.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/random.h"
#include "ingot/parallel/dist_env.h"
#include "ingot/parallel/reducer.h"
#include "ingot/parallel/tcp_kv_store.h"
#include "ingot/runtime/plugin_loader.h"
#include "rank_processes.h"

namespace ingot::parallel {
namespace {

struct Group {
  DistEnv env;
  std::unique_ptr<TcpKvStore> store;
  std::unique_ptr<Communicator> comm;
};

Group join() {
  PluginLoader::instance().load_file(std::string(INGOT_COMM_FIXTURE_DIR) + "/libfixture_comm.so");
  Group g;
  g.env = *dist_env_from_environment();
  g.store = std::make_unique<TcpKvStore>(g.env.master_addr, g.env.master_port, g.env.rank == 0,
                                         std::chrono::milliseconds(20000));
  g.comm = std::make_unique<Communicator>("fixture_kv", g.env.rank, g.env.world_size, *g.store);
  return g;
}

// The same MLP on every rank (same seed), and a fixed global batch.
std::shared_ptr<nn::Sequential> model() {
  Generator gen(11);
  return nn::make_mlp({.sizes = {12, 16, 8, 3}}, &gen);
}

struct Batch {
  Tensor x, y;
};
Batch global_batch(int64_t n) {
  Generator gen(5);
  Batch b{randn(Shape{n, 12}, DType::F32, &gen), Tensor()};
  std::vector<int64_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[i] = (i * 7) % 3;
  b.y = Tensor::from_vector(y, Shape{n});
  return b;
}

// Rows [rank * n / W, (rank + 1) * n / W).
Batch slice(const Batch& b, int rank, int world) {
  const int64_t n = b.x.size(0) / world;
  return {b.x.slice(0, rank * n, (rank + 1) * n).contiguous(), b.y.slice(0, rank * n, (rank + 1) * n).contiguous()};
}

void check_close(const Tensor& got, const Tensor& want, const std::string& name) {
  const auto a = got.to_vector<double>(), b = want.to_vector<double>();
  REQUIRE(a.size() == b.size());
  double scale = 0;
  for (double v : b) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(name << "[" << i << "]: " << a[i] << " vs " << b[i]);
    REQUIRE(std::abs(a[i] - b[i]) <= 1e-6 * scale + 1e-9);
  }
}

// The single-process gradients of the whole batch (the mean loss over its rows).
std::vector<Tensor> reference_grads(const Batch& whole) {
  const auto m = model();
  nn::cross_entropy((*m)(whole.x), whole.y).backward();
  std::vector<Tensor> g;
  for (const auto& [n, p] : m->named_parameters()) g.push_back(p.grad().clone());
  return g;
}

TEST_CASE("reducer: averaged gradients equal the whole batch's, with 2 and 3 processes", "[parallel]") {
  for (const int world : {2, 3}) {
    if (!test::run_as_ranks(world)) continue;
    Group g = join();
    const Batch whole = global_batch(6 * g.env.world_size);
    const std::vector<Tensor> want = reference_grads(whole);
    const auto m = model();
    // A small cap: several buckets, so their order and overlap are exercised.
    Reducer reducer(m->named_parameters(), *g.comm, {.bucket_mb = 0.0003, .first_bucket_mb = 0.0001});
    REQUIRE(reducer.buckets().size() >= 3);
    // Reverse registration order: the first bucket starts with the last parameter.
    CHECK(reducer.param_name(reducer.buckets().front().params.front()) == "5.bias");
    const Batch mine = slice(whole, g.env.rank, g.env.world_size);
    reducer.prepare_for_backward(true);
    nn::cross_entropy((*m)(mine.x), mine.y).backward();
    reducer.finalize();
    CHECK(reducer.reductions() == static_cast<int64_t>(reducer.buckets().size()));
    // Every bucket was complete before backward ended: all launched from the hooks.
    CHECK(reducer.reductions_during_backward() == reducer.reductions());
    size_t k = 0;
    for (const auto& [name, p] : m->named_parameters()) check_close(p.grad(), want[k++], name);
    g.comm->barrier();
    return;
  }
}

TEST_CASE("reducer: no_sync micro-batches accumulate and the last one reduces", "[parallel]") {
  if (!test::run_as_ranks(2)) return;
  Group g = join();
  const Batch whole = global_batch(8);
  const std::vector<Tensor> want = reference_grads(whole);
  const auto m = model();
  Reducer reducer(m->named_parameters(), *g.comm, {});
  // Two micro-batches of 2 rows per rank, each loss halved: the mean over the rank's 4 rows.
  const Batch mine = slice(whole, g.env.rank, 2);
  for (int micro = 0; micro < 2; ++micro) {
    reducer.prepare_for_backward(/*sync=*/micro == 1);
    const Tensor x = mine.x.slice(0, micro * 2, micro * 2 + 2), y = mine.y.slice(0, micro * 2, micro * 2 + 2);
    (nn::cross_entropy((*m)(x.contiguous()), y.contiguous()) * 0.5).backward();
    reducer.finalize();
    CHECK(reducer.reductions() == (micro == 0 ? 0 : static_cast<int64_t>(reducer.buckets().size())));
  }
  size_t k = 0;
  for (const auto& [name, p] : m->named_parameters()) check_close(p.grad(), want[k++], name);
  g.comm->barrier();
}

TEST_CASE("reducer: an unused parameter is named, or reduced as zero with find_unused_parameters", "[parallel]") {
  if (!test::run_as_ranks(2)) return;
  Group g = join();
  const auto m = model();
  const Tensor extra = zeros(Shape{4}).set_requires_grad(true);  // never used in the forward
  auto params = m->named_parameters();
  params.emplace_back("extra", extra);
  const Batch mine = slice(global_batch(4), g.env.rank, 2);
  {
    Reducer reducer(params, *g.comm, {.find_unused_parameters = true});
    reducer.prepare_for_backward(true);
    nn::cross_entropy((*m)(mine.x), mine.y).backward();
    reducer.finalize();
    REQUIRE(extra.grad().defined());
    CHECK(extra.grad().to_vector<float>() == std::vector<float>(4, 0.0f));
  }
  g.comm->barrier();
  {
    Reducer reducer(params, *g.comm, {});
    reducer.prepare_for_backward(true);
    nn::cross_entropy((*m)(mine.x), mine.y).backward();
    REQUIRE_THROWS_WITH(reducer.finalize(), Catch::Contains("extra") && Catch::Contains("find_unused_parameters"));
  }
  g.comm->barrier();
}

}  // namespace
}  // namespace ingot::parallel
