// Gradient checkpointing of modules: checkpoint_sequential and Module::set_checkpoint give the
// plain run's gradients bit for bit (Dropout, BatchNorm in eval and in training, Linear, Conv2d,
// ReLU, MaxPool), leave state_dict names alone, keep fusion inside segments, restore train/eval
// mode, and keep far fewer bytes between forward and backward.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/dispatch_chain.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

std::shared_ptr<MaxPool2d> pool2() {
  Pool2dParams p;
  p.kernel = {2, 2};
  return std::make_shared<MaxPool2d>(p);
}

/// 8x8 single-channel images -> 4 classes, with every kind of layer the brief names.
std::shared_ptr<Sequential> mixed_net(Generator& init, Generator* dropout_gen) {
  Conv2dOptions c;
  c.padding = {1, 1};
  auto net = std::make_shared<Sequential>();
  net->push_back(std::make_shared<Conv2d>(1, 4, 3, c, &init));
  net->push_back(std::make_shared<BatchNorm2d>(4));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(pool2());
  net->push_back(std::make_shared<Conv2d>(4, 8, 3, c, &init));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(std::make_shared<Dropout>(0.2, dropout_gen));
  net->push_back(pool2());
  net->push_back(std::make_shared<Flatten>());
  net->push_back(std::make_shared<Linear>(32, 16, true, &init));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(std::make_shared<Dropout>(0.3, dropout_gen));
  net->push_back(std::make_shared<Linear>(16, 16, true, &init));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(std::make_shared<Linear>(16, 4, true, &init));
  return net;
}

StateDict snapshot(const Module& m) {
  StateDict out;
  for (const auto& [name, t] : m.state_dict()) out.emplace_back(name, t.detach().clone());
  return out;
}

/// What one training step produced: loss, gradients and state, compared exactly.
struct Step {
  std::vector<float> loss;
  std::map<std::string, std::vector<float>> grads;
  std::map<std::string, std::vector<double>> state;
  Generator::State dropout_rng;
  Generator::State default_rng;
  bool operator==(const Step&) const = default;
};

Step train_step(Module& model, const StateDict& start, Generator& dropout_gen, const Tensor& x, const Tensor& y) {
  model.load_state_dict(start);
  model.zero_grad();
  dropout_gen.manual_seed(99);
  default_generator().manual_seed(5);
  const Tensor loss = cross_entropy(model(x), y);
  loss.backward();
  Step s{loss.to_vector<float>(), {}, {}, dropout_gen.state(), default_generator().state()};
  for (const auto& [name, p] : model.named_parameters()) s.grads[name] = p.grad().to_vector<float>();
  for (const auto& [name, t] : model.state_dict()) s.state[name] = t.to_vector<double>();
  return s;
}

Tensor labels(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i % 4);
  return Tensor::from_vector(v, {n});
}

/// Counts the ops of given kinds that reach the dispatch chain.
class OpCounter final : public OpInterceptor {
 public:
  const char* name() const override { return "test_op_counter"; }
  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    ++counts[call.op];
    return next(call);
  }
  std::map<OpKind, int> counts;
};

/// The reference backend alone, then everything loaded (cpu_onednn when built).
std::vector<std::vector<std::string>> backend_sets() { return test::backend_sets("checkpointing"); }

using test::RestoreBackends;

}  // namespace

TEST_CASE("nn checkpoint: checkpoint_sequential gives the plain gradients bit for bit", "[nn][checkpoint]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    Generator init(1), dropout_gen(99);
    auto net = mixed_net(init, &dropout_gen);
    net->train();
    (*net)[1]->eval();  // BatchNorm with running statistics
    const StateDict start = snapshot(*net);
    const Tensor x = test::random_tensor({6, 1, 8, 8}, DType::F32, 3);
    const Tensor y = labels(6);
    const Step plain = train_step(*net, start, dropout_gen, x, y);
    for (int64_t segments : {2, 3, 4, 7, 15}) {
      INFO("segments " << segments);
      checkpoint_sequential(*net, segments);
      const Step ckpt = train_step(*net, start, dropout_gen, x, y);
      CHECK(ckpt.loss == plain.loss);
      CHECK(ckpt.grads == plain.grads);
      CHECK(ckpt.state == plain.state);
      CHECK(ckpt.dropout_rng == plain.dropout_rng);  // the training loop's stream goes on unchanged
      CHECK(ckpt.default_rng == plain.default_rng);
    }
    checkpoint_sequential(*net, 0);
    CHECK(train_step(*net, start, dropout_gen, x, y) == plain);
    CHECK_THROWS_AS(checkpoint_sequential(*net, 16), InputError);
  }
}

TEST_CASE("nn checkpoint: BatchNorm in training updates its running statistics once", "[nn][checkpoint]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    Generator init(2), dropout_gen(99);
    auto net = mixed_net(init, &dropout_gen);
    net->train();
    const StateDict start = snapshot(*net);
    const Tensor x = test::random_tensor({6, 1, 8, 8}, DType::F32, 4);
    const Tensor y = labels(6);
    const Step plain = train_step(*net, start, dropout_gen, x, y);
    const auto& bn = static_cast<BatchNorm2d&>(*(*net)[1]);
    for (int64_t segments : {2, 5}) {
      INFO("segments " << segments);
      checkpoint_sequential(*net, segments);
      const Step ckpt = train_step(*net, start, dropout_gen, x, y);
      CHECK(ckpt.grads == plain.grads);
      // running_mean, running_var and num_batches_tracked as after one plain step (not two)
      CHECK(ckpt.state == plain.state);
      CHECK(bn.num_batches_tracked().item() == 1.0);
      CHECK(ckpt.state.at("1.running_mean") != start[2].second.to_vector<double>());
    }
  }
}

TEST_CASE("nn checkpoint: a checkpointed block (Module::set_checkpoint) keeps names and gradients",
          "[nn][checkpoint]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    Generator init(3);
    auto net = std::make_shared<Sequential>();
    Conv2dOptions c;
    c.padding = {1, 1};
    net->push_back(std::make_shared<Conv2d>(3, 8, 3, c, &init));
    auto block = std::make_shared<BasicBlock>(8, 16, 2, &init);
    net->push_back(block);
    net->push_back(std::make_shared<BasicBlock>(16, 16, 1, &init));
    net->push_back(std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
    net->push_back(std::make_shared<Flatten>());
    net->push_back(std::make_shared<Linear>(16, 4, true, &init));
    net->train();
    Generator unused(0);
    const StateDict start = snapshot(*net);
    const Tensor x = test::random_tensor({4, 3, 8, 8}, DType::F32, 5);
    const Step plain = train_step(*net, start, unused, x, labels(4));
    std::vector<std::string> names;
    for (const auto& [name, t] : net->state_dict()) names.push_back(name);

    int hook_calls = 0;
    block->register_forward_hook([&](Module&, const Tensor&, const Tensor&) {
      ++hook_calls;
      return std::nullopt;
    });
    block->set_checkpoint();
    (*net)[2]->set_checkpoint();
    const Step ckpt = train_step(*net, start, unused, x, labels(4));
    CHECK(ckpt == plain);
    CHECK(hook_calls == 1);  // hooks run once: the recomputation is not a forward of the model
    std::vector<std::string> names_after;
    for (const auto& [name, t] : net->state_dict()) names_after.push_back(name);
    CHECK(names_after == names);
    // A checkpoint of the checkpointed model loads into a plain one.
    Generator init2(3);
    auto plain_net = std::make_shared<Sequential>();
    plain_net->push_back(std::make_shared<Conv2d>(3, 8, 3, c, &init2));
    plain_net->push_back(std::make_shared<BasicBlock>(8, 16, 2, &init2));
    plain_net->push_back(std::make_shared<BasicBlock>(16, 16, 1, &init2));
    plain_net->push_back(std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
    plain_net->push_back(std::make_shared<Flatten>());
    plain_net->push_back(std::make_shared<Linear>(16, 4, true, &init2));
    checkpoint_sequential(*net, 3);
    CHECK_NOTHROW(plain_net->load_state_dict(net->state_dict()));
  }
}

TEST_CASE("nn checkpoint: fusion still runs inside a segment", "[nn][checkpoint]") {
  Generator init(4);
  auto net = std::make_shared<Sequential>(
      std::initializer_list<ModulePtr>{std::make_shared<Linear>(8, 8, true, &init), std::make_shared<ReLU>(),
                                       std::make_shared<Linear>(8, 8, true, &init), std::make_shared<ReLU>(),
                                       std::make_shared<Linear>(8, 4, true, &init), std::make_shared<ReLU>()});
  checkpoint_sequential(*net, 3);  // [Linear, ReLU] x 3, the first two checkpointed
  auto counter = std::make_shared<OpCounter>();
  dispatch_chain::add(counter, InterceptorOrder::Observer);
  const Tensor out = (*net)(test::random_tensor({5, 8}, DType::F32, 6));
  const std::map<OpKind, int> forward = counter->counts;
  sum(out).backward();
  const std::map<OpKind, int> total = counter->counts;
  dispatch_chain::remove(counter.get());
  CHECK(forward.count(INGOT_OP_RELU) == 0);  // every ReLU fused into its matmul
  CHECK(forward.at(INGOT_OP_MATMUL) == 3);
  // the backward pass recomputes the two checkpointed segments, fused as well
  CHECK(total.count(INGOT_OP_RELU) == 0);
  CHECK(total.at(INGOT_OP_MATMUL) >= 3 + 2 + 5);  // forward + recomputation + gradient matmuls
}

TEST_CASE("nn checkpoint: the recomputation runs in the train/eval mode of the forward", "[nn][checkpoint]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    Generator init(5), dropout_gen(99);
    auto net = mixed_net(init, &dropout_gen);
    net->train();
    const StateDict start = snapshot(*net);
    const Tensor x = test::random_tensor({6, 1, 8, 8}, DType::F32, 7);
    const Step plain = train_step(*net, start, dropout_gen, x, labels(6));

    checkpoint_sequential(*net, 4);
    net->load_state_dict(start);
    net->zero_grad();
    dropout_gen.manual_seed(99);
    default_generator().manual_seed(5);
    const Tensor loss = cross_entropy((*net)(x), labels(6));
    net->eval();  // e.g. an evaluation between forward and backward
    loss.backward();
    for (const auto& [name, p] : net->named_parameters()) CHECK(p.grad().to_vector<float>() == plain.grads.at(name));
    for (const auto& [name, m] : net->named_modules()) CHECK_FALSE(m->is_training());  // put back after
    CHECK(dropout_gen.state() == plain.dropout_rng);
  }
}

TEST_CASE("nn checkpoint: a deep Sequential keeps far fewer bytes between forward and backward",
          "[nn][checkpoint][memory]") {
  // A ResNet-20-like Sequential: a stem, nine basic blocks, pooling and the classifier.
  Generator init(6);
  const auto make = [&] {
    init.manual_seed(6);
    auto net = std::make_shared<Sequential>();
    Conv2dOptions c;
    c.padding = {1, 1};
    c.bias = false;
    net->push_back(std::make_shared<Conv2d>(1, 8, 3, c, &init));
    net->push_back(std::make_shared<BatchNorm2d>(8));
    net->push_back(std::make_shared<ReLU>());
    int64_t in = 8;
    for (int stage = 0; stage < 3; ++stage)
      for (int b = 0; b < 3; ++b) {
        const int64_t out = 8 << stage;
        net->push_back(std::make_shared<BasicBlock>(in, out, b == 0 && stage > 0 ? 2 : 1, &init));
        in = out;
      }
    net->push_back(std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
    net->push_back(std::make_shared<Flatten>());
    net->push_back(std::make_shared<Linear>(in, 4, true, &init));
    return net;
  };
  PluginLoader::instance().load_all();  // cpu_onednn when built: its layouts are what a run keeps
  const Tensor x = test::random_tensor({16, 1, 16, 16}, DType::F32, 8);
  const Tensor y = labels(16);
  // Bytes held by live tensors after the forward pass (the graph's saved activations), beyond
  // what was held before it.
  const auto kept = [&](Sequential& net) {
    net.zero_grad();
    const int64_t before = memory_stats(Device::cpu()).allocated;
    Tensor loss = cross_entropy(net(x), y);
    const int64_t after = memory_stats(Device::cpu()).allocated;
    loss.backward();
    return after - before;
  };
  auto plain_net = make();
  auto ckpt_net = make();
  checkpoint_sequential(*ckpt_net, 4);
  auto block_net = make();
  for (size_t i = 3; i < 12; ++i) (*block_net)[i]->set_checkpoint();
  kept(*plain_net);  // warm-up: plan caches and the like are not activations
  const int64_t plain = kept(*plain_net);
  const int64_t segments = kept(*ckpt_net);
  const int64_t blocks = kept(*block_net);
  INFO("kept after forward: plain " << plain << " B, 4 segments " << segments << " B, per block " << blocks << " B");
  CHECK(plain > 0);
  CHECK(segments < plain * 7 / 10);
  CHECK(blocks < plain * 7 / 10);
}
