// Pipeline parallelism: the split (layer counts per stage, an even split, one ConfigError line per
// bad split), and GPipe training of an MLP and a CNN over 1, 2 and 3 processes with 1, 2 and 4
// micro-batches: the loss, every stage's gradients, forward() and the weights after 5 SGD steps
// equal the single-process model's; the epoch loop gives the single-process losses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/data/synthetic.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/pooling.h"
#include "ingot/nn/sequential.h"
#include "ingot/optim/clip_grad.h"
#include "ingot/optim/sgd.h"
#include "ingot/parallel/dist_env.h"
#include "ingot/parallel/pipeline_parallel.h"
#include "ingot/parallel/pipeline_train.h"
#include "ingot/parallel/tcp_kv_store.h"
#include "ingot/runtime/communicator.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/kv_store.h"
#include "ingot/runtime/plugin_loader.h"
#include "rank_processes.h"
#include "test_support.h"

namespace ingot::parallel {
namespace {

using std::chrono::seconds;

void load_fixture() {
  const PluginRecord rec =
      PluginLoader::instance().load_file(std::string(INGOT_COMM_FIXTURE_DIR) + "/libfixture_comm.so");
  INFO(rec.reason);
  REQUIRE(rec.available);
}

// The gloo plugin of this build when there is one, else any the plugin folders hold.
bool gloo_loadable() {
#ifdef INGOT_GLOO_PLUGIN
  PluginLoader::instance().load_file(INGOT_GLOO_PLUGIN);
#else
  PluginLoader::instance().load_all();
#endif
  return CommunicatorRegistry::instance().find("gloo") != nullptr;
}

// A model builder, the per-sample input shape, and the layers of each stage for 1, 2 and 3 ranks.
struct Net {
  nn::ModulePtr (*make)();
  Shape sample;
  std::map<int, std::vector<int64_t>> splits;
};

constexpr int64_t kClasses = 5;

nn::ModulePtr make_mlp() {
  Generator gen(7);
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(12, 16, true, &gen), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(16, 16, true, &gen), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(16, kClasses, true, &gen)});
  m->to(DType::F64);
  return m;
}

nn::ModulePtr make_cnn() {
  Generator gen(11);
  nn::Conv2dOptions same;
  same.padding = {1, 1};
  Pool2dParams pool;
  pool.kernel = {2, 2};
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Conv2d>(2, 4, 3, same, &gen), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(pool), std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(4 * 4 * 4, kClasses, true, &gen)});
  m->to(DType::F64);
  return m;
}

const Net kMlp{make_mlp, Shape{12}, {{1, {}}, {2, {3, 2}}, {3, {2, 2, 1}}}};
const Net kCnn{make_cnn, Shape{2, 8, 8}, {{1, {}}, {2, {2, 3}}, {3, {1, 2, 2}}}};

Tensor loss_fn(const Tensor& output, const Tensor& targets) { return nn::cross_entropy(output, targets); }

Tensor inputs_of(const Net& net, int64_t batch, uint64_t seed) {
  std::vector<int64_t> dims{batch};
  for (const int64_t d : net.sample) dims.push_back(d);
  return test::random_tensor(Shape(dims), DType::F64, seed);
}

Tensor targets_of(int64_t batch, uint64_t seed) {
  std::vector<int64_t> t;
  for (int64_t i = 0; i < batch; ++i)
    t.push_back(static_cast<int64_t>((static_cast<uint64_t>(i) * 3 + seed) % kClasses));
  return Tensor::from_vector(t, Shape{batch});
}

// max |a - b| / max |b|.
double rel_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double diff = 0.0, scale = 1e-30;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return diff / scale;
}

Tensor param_of(const nn::Module& m, const std::string& name) {
  for (const auto& [n, p] : m.named_parameters())
    if (n == name) return p;
  FAIL("no parameter " << name);
  return {};
}

// One batch through the pipeline and through the whole model: loss, gradients, forward().
void check_one_batch(const Net& net, const Communicator& comm, int64_t batch, int64_t micro_batches) {
  INFO("rank " << comm.rank() << " of " << comm.world_size() << ", batch " << batch << ", " << micro_batches
               << " micro-batches");
  const nn::ModulePtr model = net.make(), reference = net.make();
  PipelineParallel pipe(model, net.splits.at(comm.world_size()), comm);
  const Tensor x = inputs_of(net, batch, 100 + batch), y = targets_of(batch, micro_batches);
  const double loss =
      pipe.train_step(pipe.is_first() ? x : Tensor(), pipe.is_last() ? y : Tensor(), loss_fn, micro_batches);
  const Tensor ref_loss = loss_fn((*reference)(x), y);
  ref_loss.backward();
  CHECK(std::abs(loss - ref_loss.item()) <= 1e-6 * std::abs(ref_loss.item()));
  for (const auto& [name, p] : pipe.named_parameters()) {
    INFO(name);
    REQUIRE(p.grad().defined());
    CHECK(rel_diff(p.grad(), param_of(*reference, name).grad()) <= 1e-6);
  }
  // Clipping by the norm over every stage: torch's clip_grad_norm_ of the whole model.
  const double norm = pipe.clip_grad_norm(0.05), ref_norm = optim::clip_grad_norm_(reference->parameters(), 0.05);
  REQUIRE(ref_norm > 0.1);
  CHECK(std::abs(norm - ref_norm) <= 1e-6 * ref_norm);
  for (const auto& [name, p] : pipe.named_parameters())
    CHECK(rel_diff(p.grad(), param_of(*reference, name).grad()) <= 1e-6);
  // The stages hold every parameter of the model between them, once.
  const Tensor count =
      Tensor::from_vector(std::vector<int64_t>{static_cast<int64_t>(pipe.parameters().size())}, Shape{1});
  comm.all_reduce(count);
  CHECK(count.item() == static_cast<double>(reference->parameters().size()));

  const Tensor out = pipe.forward(pipe.is_first() ? x : Tensor());
  const NoGradGuard no_grad;
  CHECK(rel_diff(out, (*reference)(x)) <= 1e-6);
}

// Five SGD steps (momentum) on the pipeline and on the whole model: the weights still agree.
void check_sgd(const Net& net, const Communicator& comm, int64_t micro_batches) {
  INFO("rank " << comm.rank() << " of " << comm.world_size() << ", " << micro_batches << " micro-batches, SGD");
  const nn::ModulePtr model = net.make(), reference = net.make();
  PipelineParallel pipe(model, net.splits.at(comm.world_size()), comm);
  optim::SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  // (a stage of only ReLU and pooling has nothing to optimize)
  std::unique_ptr<optim::SGD> opt;
  if (!pipe.parameters().empty()) opt = std::make_unique<optim::SGD>(pipe.parameters(), o);
  optim::SGD ref_opt(reference->parameters(), o);
  for (int step = 0; step < 5; ++step) {
    const Tensor x = inputs_of(net, 8, 200 + step), y = targets_of(8, step);
    if (opt) opt->zero_grad();
    const double loss = pipe.train_step(x, y, loss_fn, micro_batches);
    if (opt) opt->step();
    ref_opt.zero_grad();
    const Tensor ref_loss = loss_fn((*reference)(x), y);
    ref_loss.backward();
    ref_opt.step();
    CHECK(std::abs(loss - ref_loss.item()) <= 1e-6 * std::abs(ref_loss.item()));
  }
  for (const auto& [name, p] : pipe.named_parameters()) {
    INFO(name);
    CHECK(rel_diff(p, param_of(*reference, name)) <= 1e-6);
  }
}

void check_net(const Net& net, const Communicator& comm) {
  for (const int64_t m : {1, 2, 4}) {
    check_one_batch(net, comm, 8, m);
    check_sgd(net, comm, m);
  }
  check_one_batch(net, comm, 7, 4);  // uneven micro-batches: 2, 2, 2, 1
  check_one_batch(net, comm, 3, 4);  // fewer samples than micro-batches: 3 of one
}

// This process as one rank: the group over the launch variables, then `body`.
template <class Body>
void as_rank(const std::string& communicator, const Body& body) {
  const auto d = dist_env_from_environment();
  REQUIRE(d);
  TcpKvStore store(d->master_addr, d->master_port, d->rank == 0, seconds(30));
  if (communicator == "fixture_kv")
    load_fixture();
  else
    REQUIRE(gloo_loadable());
  const Communicator comm(communicator, d->rank, d->world_size, store);
  body(comm);
  // Rank 0 serves the store: it leaves once every rank has said it is done with it.
  store.set("done/" + std::to_string(d->rank), "");
  if (d->rank == 0)
    for (int r = 0; r < d->world_size; ++r) store.get("done/" + std::to_string(r), seconds(30));
}

TEST_CASE("pipeline split: layer counts and an even split give each stage its layers", "[parallel][pipeline]") {
  CHECK(pipeline_bounds({2, 2, 1}, 5, 3) == std::vector<int64_t>{0, 2, 4, 5});
  CHECK(pipeline_bounds({1, 4}, 5, 2) == std::vector<int64_t>{0, 1, 5});
  CHECK(pipeline_bounds({5}, 5, 1) == std::vector<int64_t>{0, 5});
  CHECK(pipeline_bounds({}, 5, 2) == std::vector<int64_t>{0, 3, 5});
  CHECK(pipeline_bounds({}, 7, 3) == std::vector<int64_t>{0, 3, 5, 7});
  CHECK(pipeline_bounds({}, 4, 1) == std::vector<int64_t>{0, 4});
  CHECK(micro_batch_sizes(8, 4) == std::vector<int64_t>{2, 2, 2, 2});
  CHECK(micro_batch_sizes(7, 3) == std::vector<int64_t>{3, 2, 2});
  CHECK(micro_batch_sizes(2, 4) == std::vector<int64_t>{1, 1});
  REQUIRE_THROWS_AS(micro_batch_sizes(8, 0), ConfigError);
  REQUIRE_THROWS_WITH(micro_batch_sizes(8, 0), Catch::Contains("parallel.micro_batches"));
}

TEST_CASE("pipeline split: a bad split or a model that is not a Sequential is one ConfigError line",
          "[parallel][pipeline]") {
  load_fixture();
  InProcessKvStore store;
  const Communicator comm("fixture_kv", 0, 1, store);
  const auto one_line_error = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
      FAIL("no error; expected one naming '" << part << "'");
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find(part) != std::string::npos);
    }
  };
  // Stages beyond the layer count (or short of it), an empty stage, more stages than ranks (or fewer).
  one_line_error([&] { PipelineParallel(make_mlp(), {7}, comm); },
                 "parallel.stages: the stages hold 7 layers, but the model has 5 top-level layers");
  one_line_error([] { pipeline_bounds({2, 2}, 5, 2); }, "the stages hold 4 layers, but the model has 5");
  one_line_error([] { pipeline_bounds({5, 0}, 5, 2); }, "parallel.stages[1]: stage 1 holds 0 layers");
  one_line_error([&] { PipelineParallel(make_mlp(), {3, 2}, comm); }, "parallel.stages: 2 stages for 1 ranks");
  one_line_error([] { pipeline_bounds({5}, 5, 3); }, "1 stages for 3 ranks");
  one_line_error([] { pipeline_bounds({}, 2, 3); }, "too few for 3 pipeline stages");
  one_line_error([&] { PipelineParallel(std::make_shared<nn::Linear>(3, 4), {}, comm); },
                 "parallel.mode: pipeline splits a Sequential model");
}

TEST_CASE("pipeline parallel: one stage computes what the plain model does", "[parallel][pipeline]") {
  load_fixture();
  for (const Net* net : {&kMlp, &kCnn}) {
    InProcessKvStore store;
    const Communicator comm("fixture_kv", 0, 1, store);
    check_net(*net, comm);
  }
}

TEST_CASE("pipeline parallel: an MLP over 2 and 3 processes matches one process", "[parallel][pipeline]") {
  for (const int world : {2, 3}) {
    if (!test::run_as_ranks(world)) continue;
    as_rank("fixture_kv", [](const Communicator& comm) { check_net(kMlp, comm); });
    return;
  }
}

TEST_CASE("pipeline parallel: a CNN over 2 and 3 processes matches one process", "[parallel][pipeline]") {
  for (const int world : {2, 3}) {
    if (!test::run_as_ranks(world)) continue;
    as_rank("fixture_kv", [](const Communicator& comm) { check_net(kCnn, comm); });
    return;
  }
}

TEST_CASE("pipeline parallel: an MLP and a CNN over gloo in 2 and 3 processes match one process",
          "[parallel][pipeline]") {
  if (!test::in_rank_process() && !gloo_loadable()) return test::skip("no communicator plugin named gloo is loadable");
  for (const int world : {2, 3}) {
    if (!test::run_as_ranks(world)) continue;
    as_rank("gloo", [](const Communicator& comm) {
      check_net(kMlp, comm);
      check_net(kCnn, comm);
    });
    return;
  }
}

TEST_CASE("pipeline training loop: 2 processes give the single-process losses and weights", "[parallel][pipeline]") {
  if (!test::run_as_ranks(2)) return;
  as_rank("fixture_kv", [](const Communicator& comm) {
    data::SyntheticSpec spec;
    spec.size = 44;  // 5 full batches and a short one
    spec.height = spec.width = 6;
    spec.classes = 4;
    const auto dataset = data::synthetic_dataset(spec, 3);
    data::LoaderOptions lo;
    lo.batch_size = 8;
    lo.shuffle = true;
    lo.seed = 5;
    const auto make = [] {
      Generator gen(21);
      return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
          std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(36, 16, true, &gen),
          std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(16, 4, true, &gen)});
    };
    const auto model = make(), reference = make();
    PipelineParallel pipe(model, {2, 2}, comm);
    optim::SgdOptions o;
    o.lr = 0.2;
    optim::SGD opt(pipe.parameters(), o), ref_opt(reference->parameters(), o);
    const optim::CosineSchedule schedule(12);
    data::DataLoader loader(dataset, lo), ref_loader(dataset, lo);
    std::vector<double> losses, ref_losses;
    int clipped = 0;
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      PipelineTrainOptions options;
      options.micro_batches = 2;
      options.first_step = static_cast<int64_t>(losses.size());
      options.clip_grad_norm = 1.0;
      const std::vector<double> l = run_pipeline_parallel_epoch(pipe, loader, epoch, &opt, schedule, loss_fn, options);
      losses.insert(losses.end(), l.begin(), l.end());
      ref_loader.begin_epoch(epoch);
      while (const auto batch = ref_loader.next()) {
        for (auto& g : ref_opt.param_groups())
          g.options.set_lr(schedule.lr(static_cast<int64_t>(ref_losses.size()), g.initial_lr));
        ref_opt.zero_grad();
        const Tensor loss = loss_fn((*reference)(batch->inputs), batch->targets);
        loss.backward();
        clipped += optim::clip_grad_norm_(reference->parameters(), 1.0) > 1.0 ? 1 : 0;
        ref_opt.step();
        ref_losses.push_back(loss.item());
      }
    }
    REQUIRE(losses.size() == 12);
    REQUIRE(ref_losses.size() == 12);
    for (size_t i = 0; i < losses.size(); ++i) CHECK(std::abs(losses[i] - ref_losses[i]) <= 1e-5 * ref_losses[i]);
    for (const auto& [name, p] : pipe.named_parameters()) CHECK(rel_diff(p, param_of(*reference, name)) <= 1e-5);
    CHECK(ref_losses.back() < ref_losses.front());  // it learns: the comparison is not of constants
    CHECK(clipped > 0);                             // and the clipping did something

    const PipelineEvaluation eval = evaluate_pipeline_parallel(pipe, loader, loss_fn);
    CHECK(eval.samples == 44);
    CHECK(pipe.stage().is_training());
    double ref_sum = 0.0;
    int64_t correct = 0;
    ref_loader.begin_epoch(0);
    const NoGradGuard no_grad;
    while (const auto batch = ref_loader.next()) {
      const Tensor logits = (*reference)(batch->inputs);
      ref_sum += loss_fn(logits, batch->targets).item() * static_cast<double>(batch->targets.size(0));
      correct += nn::accuracy_count(logits, batch->targets);
    }
    CHECK(std::abs(eval.loss - ref_sum / 44.0) <= 1e-5 * eval.loss);
    CHECK(eval.accuracy == static_cast<double>(correct) / 44.0);
  });
}

}  // namespace
}  // namespace ingot::parallel
