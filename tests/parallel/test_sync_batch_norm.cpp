// SyncBatchNorm against BatchNorm2d on the concatenated batch: groups of 2 and 3 rank processes,
// each holding a slice of one global batch (outputs, running statistics, input gradients, weight
// and bias gradients, DDP-averaged gradients of a conv + BN model, finite differences), eval
// mode, world size 1 bit for bit, and convert_sync_batchnorm.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/sequential.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "ingot/parallel/dist_env.h"
#include "ingot/parallel/sync_batch_norm.h"
#include "ingot/parallel/tcp_kv_store.h"
#include "ingot/runtime/communicator.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/kv_store.h"
#include "ingot/runtime/plugin_loader.h"
#include "rank_processes.h"
#include "test_support.h"

namespace ingot::parallel {
namespace {

using std::chrono::milliseconds;
constexpr int64_t kC = 3;
constexpr double kAtol = 1e-12, kRtol = 1e-9;  // float64 throughout

// Whether communicator `name` can be used here: fixture_kv from its test folder, others (gloo)
// from the plugins the build ships.
bool communicator_available(const std::string& name) {
  if (name == "fixture_kv") {
    PluginLoader::instance().load_file(std::string(INGOT_COMM_FIXTURE_DIR) + "/libfixture_comm.so");
  } else {
    PluginLoader::instance().load_all();
  }
  return CommunicatorRegistry::instance().find(name) != nullptr;
}

// This process's rank of the group the test case was started as; rank 0 serves the store, so
// every rank meets at a barrier before leaving.
struct Rank {
  explicit Rank(const std::string& comm_name) {
    REQUIRE(communicator_available(comm_name));
    env = *dist_env_from_environment();
    store = std::make_unique<TcpKvStore>(env.master_addr, env.master_port, env.rank == 0, milliseconds(10000));
    comm = std::make_unique<Communicator>(comm_name, env.rank, env.world_size, *store);
  }
  ~Rank() {
    try {
      comm->barrier();
    } catch (...) {  // a rank that died already fails the test
    }
  }
  Rank(const Rank&) = delete;
  Rank& operator=(const Rank&) = delete;

  // Rank r's rows of a batch of n: sizes n / world, the first n % world ranks one more.
  std::pair<int64_t, int64_t> rows(int64_t n) const {
    const int64_t w = env.world_size, r = env.rank;
    const int64_t start = r * (n / w) + std::min<int64_t>(r, n % w);
    return {start, start + n / w + (r < n % w ? 1 : 0)};
  }
  Tensor slice(const Tensor& t) const {
    const auto [a, b] = rows(t.shape()[0]);
    return t.detach().slice(0, a, b).contiguous();
  }

  DistEnv env;
  std::unique_ptr<TcpKvStore> store;
  std::unique_ptr<Communicator> comm;
};

// Runs the case as `world` ranks over `comm_name`; false in the parent (or when skipped).
bool as_ranks(const std::string& comm_name, int world) {
  if (!test::in_rank_process() && !communicator_available(comm_name)) {
    test::skip("communicator '" + comm_name + "' is not built or not loadable here");
    return false;
  }
  return test::run_as_ranks(world);
}

// Channel-shifted, scaled values (mean far from 0, so the variance's cancellation shows).
Tensor batch(int64_t n, uint64_t seed) {
  return test::random_tensor({n, kC, 5, 5}, DType::F64, seed, -2.0, 2.0) * 3.0 + 5.0;
}

nn::BatchNormOptions options() {
  nn::BatchNormOptions o;
  o.momentum = 0.3;
  return o;
}

template <class M>
void set_affine(M& bn) {
  NoGradGuard no_grad;
  bn.weight().copy_(test::random_tensor({kC}, DType::F64, 7, 0.5, 1.5));
  bn.bias().copy_(test::random_tensor({kC}, DType::F64, 8, -0.5, 0.5));
}

Tensor summed(const Communicator& comm, const Tensor& t, ReduceOp op = ReduceOp::Sum) {
  Tensor out = t.detach().clone();
  comm.all_reduce(out, op);
  return out;
}

void check_matches_whole_batch(const std::string& comm_name) {
  for (const int world : {2, 3}) {
    if (!as_ranks(comm_name, world)) continue;
    Rank rank(comm_name);
    nn::BatchNorm2d ref(kC, options());
    SyncBatchNorm sync(kC, options(), rank.comm.get());
    ref.to(DType::F64);
    sync.to(DType::F64);
    set_affine(ref);
    set_affine(sync);
    // Two steps of an uneven split (7 rows): the counts weigh each rank's part.
    for (uint64_t step = 0; step < 2; ++step) {
      const Tensor x = batch(7, 11 + step), dy = test::random_tensor({7, kC, 5, 5}, DType::F64, 21 + step);
      const Tensor x_all = x.clone();
      x_all.set_requires_grad(true);
      ref.zero_grad();
      const Tensor y_ref = ref(x_all);
      y_ref.backward(dy);
      const Tensor x_local = rank.slice(x);
      x_local.set_requires_grad(true);
      sync.zero_grad();
      const Tensor y = sync(x_local);
      INGOT_REQUIRE_CLOSE(y, rank.slice(y_ref), kAtol, kRtol);
      y.backward(rank.slice(dy));
      INGOT_REQUIRE_CLOSE(x_local.grad(), rank.slice(x_all.grad()), kAtol, kRtol);
      // Each rank keeps its own parameter gradients; over the ranks they sum to the whole batch's.
      INGOT_REQUIRE_CLOSE(summed(*rank.comm, sync.weight().grad()), ref.weight().grad(), kAtol, kRtol);
      INGOT_REQUIRE_CLOSE(summed(*rank.comm, sync.bias().grad()), ref.bias().grad(), kAtol, kRtol);
      CHECK(sync.num_batches_tracked().item() == static_cast<double>(step + 1));
    }
    INGOT_REQUIRE_CLOSE(sync.running_mean(), ref.running_mean(), kAtol, kRtol);
    INGOT_REQUIRE_CLOSE(sync.running_var(), ref.running_var(), kAtol, kRtol);
    return;
  }
}

TEST_CASE("sync batch norm: 2 and 3 ranks over fixture_kv match BatchNorm2d on the whole batch", "[parallel]") {
  check_matches_whole_batch("fixture_kv");
}

TEST_CASE("sync batch norm: 2 and 3 ranks over gloo match BatchNorm2d on the whole batch", "[parallel]") {
  check_matches_whole_batch("gloo");
}

// conv -> BN in float64 with the same initial values on every rank and in the reference.
std::shared_ptr<nn::Sequential> conv_bn() {
  Generator gen(5);
  auto net = std::make_shared<nn::Sequential>();
  nn::Conv2dOptions co;
  co.padding = {1, 1};
  net->push_back(std::make_shared<nn::Conv2d>(kC, kC, 3, co, &gen));
  net->push_back(std::make_shared<nn::BatchNorm2d>(kC, options()));
  net->to(DType::F64);
  return net;
}

TEST_CASE("sync batch norm: DDP-averaged gradients of per-rank mean losses equal the whole batch step", "[parallel]") {
  for (const int world : {2, 3}) {
    if (!as_ranks("fixture_kv", world)) continue;
    Rank rank("fixture_kv");
    auto ref = conv_bn();
    auto net = conv_bn();
    REQUIRE(convert_sync_batchnorm(*net, *rank.comm) == 1);
    const Tensor x = batch(6, 31), target = test::random_tensor({6, kC, 5, 5}, DType::F64, 32);
    mean((*ref)(x) * target).backward();                          // the global mean loss
    mean((*net)(rank.slice(x)) * rank.slice(target)).backward();  // each rank's mean loss
    const auto mine = net->named_parameters(), theirs = ref->named_parameters();
    REQUIRE(mine.size() == theirs.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      INFO(mine[i].first);
      INGOT_REQUIRE_CLOSE(summed(*rank.comm, mine[i].second.grad(), ReduceOp::Avg), theirs[i].second.grad(), kAtol,
                          kRtol);
    }
    return;
  }
}

TEST_CASE("sync batch norm: float32 input with a mean 1000 times its spread keeps its variance", "[parallel]") {
  for (const int world : {2, 3}) {
    if (!as_ranks("fixture_kv", world)) continue;
    Rank rank("fixture_kv");
    // Summing float32 squares here would lose the variance (sumsq / N - mean^2 ~ 1e6 - 1e6).
    const Tensor x = (test::random_tensor({6, kC, 5, 5}, DType::F32, 45, -1.0, 1.0) + 1000.0).contiguous();
    nn::BatchNorm2d ref(kC);
    ref.to(DType::F64);
    SyncBatchNorm sync(kC, {}, rank.comm.get());
    const Tensor y = sync(rank.slice(x));
    CHECK(y.dtype() == DType::F32);
    INGOT_REQUIRE_CLOSE(y, rank.slice(ref(x.to(DType::F64))), 1e-3, 0.0);
    INGOT_REQUIRE_CLOSE(sync.running_var(), ref.running_var(), 1e-5, 1e-5);
    return;
  }
}

TEST_CASE("sync batch norm: eval mode normalises with the running statistics", "[parallel]") {
  if (!as_ranks("fixture_kv", 2)) return;
  Rank rank("fixture_kv");
  nn::BatchNorm2d ref(kC, options());
  SyncBatchNorm sync(kC, options(), rank.comm.get());
  for (nn::Module* m : std::vector<nn::Module*>{&ref, &sync}) m->to(DType::F64);
  set_affine(ref);
  set_affine(sync);
  ref(batch(6, 41));
  sync(rank.slice(batch(6, 41)));
  ref.eval();
  sync.eval();
  const Tensor x = batch(6, 42), mean_before = sync.running_mean().clone();
  INGOT_REQUIRE_CLOSE(sync(rank.slice(x)), rank.slice(ref(x)), kAtol, kRtol);
  CHECK(test::excess_error(sync.running_mean(), mean_before, 0.0, 0.0) <= 0.0);
  CHECK(sync.num_batches_tracked().item() == 1.0);
}

TEST_CASE("sync batch norm: finite differences of the global loss match the backward on 2 ranks", "[parallel]") {
  if (!as_ranks("fixture_kv", 2)) return;
  Rank rank("fixture_kv");
  SyncBatchNorm sync(kC, options(), rank.comm.get());
  sync.to(DType::F64);
  set_affine(sync);
  const Tensor x = rank.slice(batch(4, 51)), t = rank.slice(test::random_tensor({4, kC, 5, 5}, DType::F64, 52));
  const Tensor xg = x.clone();
  xg.set_requires_grad(true);
  sync(xg).backward(t);  // the loss is sum over every rank of sum(y * t)
  const std::vector<double> grad = xg.grad().to_vector<double>();
  const double h = 1e-5;
  for (int k = 0; k < 8; ++k) {
    const int owner = k % 2;
    const size_t idx = static_cast<size_t>(k * 37 % x.numel());
    double loss[2];
    for (int s = 0; s < 2; ++s) {
      std::vector<double> v = x.to_vector<double>();
      if (rank.env.rank == owner) v[idx] += s == 0 ? h : -h;
      NoGradGuard no_grad;
      loss[s] = summed(*rank.comm, sum(sync(Tensor::from_vector(v, x.shape())) * t)).item();
    }
    if (rank.env.rank == owner) CHECK((loss[0] - loss[1]) / (2 * h) == Approx(grad[idx]).epsilon(1e-6).margin(1e-8));
  }
}

TEST_CASE("sync batch norm: world size 1 is BatchNorm2d bit for bit", "[parallel]") {
  REQUIRE(communicator_available("fixture_kv"));
  InProcessKvStore store;
  const Communicator one("fixture_kv", 0, 1, store);
  for (const Communicator* comm : {static_cast<const Communicator*>(nullptr), &one}) {
    nn::BatchNorm2d ref(kC);
    SyncBatchNorm sync(kC, {}, comm);
    for (int step = 0; step < 3; ++step) {
      if (step == 2) {
        ref.eval();
        sync.eval();
      }
      const Tensor x = test::random_tensor({4, kC, 5, 5}, DType::F32, 61 + step) * 2.0 + 1.0;
      const Tensor dy = test::random_tensor({4, kC, 5, 5}, DType::F32, 71 + step);
      const Tensor xa = x.clone(), xb = x.clone();
      xa.set_requires_grad(true);
      xb.set_requires_grad(true);
      ref.zero_grad();
      sync.zero_grad();
      const Tensor ya = ref(xa), yb = sync(xb);
      ya.backward(dy);
      yb.backward(dy);
      CHECK(test::excess_error(yb, ya, 0.0, 0.0) <= 0.0);
      CHECK(test::excess_error(xb.grad(), xa.grad(), 0.0, 0.0) <= 0.0);
      CHECK(test::excess_error(sync.weight().grad(), ref.weight().grad(), 0.0, 0.0) <= 0.0);
      CHECK(test::excess_error(sync.bias().grad(), ref.bias().grad(), 0.0, 0.0) <= 0.0);
      CHECK(test::excess_error(sync.running_mean(), ref.running_mean(), 0.0, 0.0) <= 0.0);
      CHECK(test::excess_error(sync.running_var(), ref.running_var(), 0.0, 0.0) <= 0.0);
    }
  }
}

TEST_CASE("convert_sync_batchnorm: replaces every BatchNorm2d and keeps the state dict", "[parallel]") {
  REQUIRE(communicator_available("fixture_kv"));
  InProcessKvStore store;
  const Communicator one("fixture_kv", 0, 1, store);
  Generator gen(3);
  nn::Sequential net{std::make_shared<nn::Conv2d>(kC, 8, 3, nn::Conv2dOptions{}, &gen),
                     std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::BasicBlock>(8, 16, 2, &gen)};
  net.eval();
  const Tensor x = test::random_tensor({2, kC, 12, 12}, DType::F32, 81);
  const Tensor before = net(x);
  const nn::StateDict state = net.state_dict();
  REQUIRE(convert_sync_batchnorm(net, one) == 4);  // 1, 2.bn1, 2.bn2, 2.shortcut.1
  int synced = 0;
  for (const auto& [name, m] : net.named_modules()) {
    CHECK(dynamic_cast<nn::BatchNorm2d*>(m) == nullptr);
    if (const auto* s = dynamic_cast<SyncBatchNorm*>(m)) {
      ++synced;
      CHECK_FALSE(s->is_training());
      CHECK(s->communicator() == &one);
    }
  }
  CHECK(synced == 4);
  const nn::StateDict after = net.state_dict();
  REQUIRE(after.size() == state.size());
  for (size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].first == state[i].first);
    CHECK(after[i].second.same_tensor(state[i].second));  // the same handles, not copies
  }
  // Conv2d + BatchNorm2d ran fused before; Conv2d then SyncBatchNorm run one after the other.
  INGOT_REQUIRE_CLOSE(net(x), before, 1e-5, 1e-5);
  CHECK(convert_sync_batchnorm(net, one) == 0);
}

TEST_CASE("convert_sync_batchnorm: a root BatchNorm2d is refused", "[parallel]") {
  REQUIRE(communicator_available("fixture_kv"));
  InProcessKvStore store;
  const Communicator one("fixture_kv", 0, 1, store);
  nn::BatchNorm2d bn(4);
  REQUIRE_THROWS_AS(convert_sync_batchnorm(bn, one), InputError);
  REQUIRE_THROWS_WITH(convert_sync_batchnorm(bn, one), Catch::Contains("wrap it in a Sequential"));
}

}  // namespace
}  // namespace ingot::parallel
