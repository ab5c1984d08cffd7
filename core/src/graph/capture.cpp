// Capture: an OpRecorder and GeneratorObserver for the duration of one step. Values are keyed by
// the storage they are (weakly: the recording keeps nothing alive, so a storage freed in the step
// and another allocated at the same address are told apart).
#include "ingot/graph/capture.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <unordered_map>

#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_recorder.h"
#include "ingot/runtime/registry.h"

namespace ingot::graph {

namespace {

/// Where an op's attributes keep a Philox (seed, offset) pair, or nullopt.
std::optional<size_t> rng_field(OpKind op, const unsigned char* attrs) {
  const std::string_view attr = op_info(op).attr;
  if (attr == "rng") return offsetof(ingot_attr_rng, seed);
  if (attr == "attention") {
    ingot_attr_attention a;
    std::memcpy(&a, attrs, sizeof a);
    if (a.dropout_p > 0.0) return offsetof(ingot_attr_attention, seed);
  }
  return std::nullopt;
}

struct External {
  std::vector<unsigned char> snapshot;  ///< empty when not copied (too large, not on the host)
  bool copied = false;
  bool upload = false;  ///< a host tensor's bytes the step copied to a device (snapshot: those bytes)
  std::string first_reader;
};

class Recorder final : public OpRecorder, public GeneratorObserver {
 public:
  explicit Recorder(const std::vector<Tensor>& inputs)
      : start_serial_(Storage::last_serial()),
        prev_recorder_(set_op_recorder(this)),
        prev_observer_(set_generator_observer(this)) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) continue;
      const int v = new_value(ValueKind::Input, inputs[i].storage());
      g_.values[v].input_index = static_cast<int>(i);
    }
  }
  ~Recorder() override {
    set_op_recorder(prev_recorder_);
    set_generator_observer(prev_observer_);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void record(const RecordedCall& c) override {
    if (!failure_.empty()) return;
    Node n;
    n.op = c.op;
    n.backend = &c.backend;
    n.in_place = c.in_place;
    const std::string name = op_info(c.op).name;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      n.inputs.push_back(c.inputs[i].defined() ? existing(c.inputs[i], c.in[i], c.inputs[i].layout(), name)
                                               : TensorRef{});
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      if (c.in_place && !allocated_unseen(c.outputs[i].storage())) {
        TensorRef r = existing(c.outputs[i], c.out[i], c.outputs[i].layout(), name);
        g_.values[r.value].written = true;
        n.outputs.push_back(std::move(r));
      } else {
        // A new output, or memory the step allocated and this op writes first (a copy into an
        // empty tensor): the op makes it.
        n.outputs.push_back(ref(new_value(ValueKind::Internal, c.outputs[i].storage()),
                                c.out[i], c.outputs[i].layout()));
      }
    }
    if (c.attrs != nullptr) {
      const auto* bytes = static_cast<const unsigned char*>(c.attrs);
      uint32_t size = 0;
      std::memcpy(&size, bytes, sizeof size);
      n.attrs.assign(bytes, bytes + size);
      if (const auto at = rng_field(c.op, bytes)) {
        uint64_t pair[2];
        std::memcpy(pair, bytes + *at, sizeof pair);
        n.rng = rng_use(pair[0], pair[1], *at);
        if (!n.rng) {
          failure_ = fmt::format("{} draws random numbers (seed {}, offset {}) from no generator the step drew from",
                                 name, pair[0], pair[1]);
          return;
        }
      }
    }
    g_.nodes.push_back(std::move(n));
  }

  void record_reorder(const Backend& owner, const std::shared_ptr<Storage>& src_storage,
                      const std::shared_ptr<OpaqueLayout>& src_layout, const ingot_tensor_desc& src,
                      const Tensor& dst) override {
    if (!failure_.empty()) return;
    Node n;
    n.backend = &owner;
    n.reorder = true;
    n.op = INGOT_OP_COUNT;
    n.inputs.push_back(existing_storage(src_storage, src, src_layout, "reorder"));
    n.outputs.push_back(ref(new_value(ValueKind::Internal, dst.storage()),
                            make_desc(dst), nullptr));
    g_.nodes.push_back(std::move(n));
  }

  void unrecordable(const char* what) override {
    if (failure_.empty()) failure_ = what;
  }

  /// A scalar (any small tensor) the step's host code made and copied to a device becomes a
  /// constant of that device, made once when the graph is built. A tensor a node made, or one that
  /// existed before the step, could hold other values next time: that copy stays unrecordable.
  void record_upload(const Tensor& src, const Tensor& dst) override {
    if (!failure_.empty()) return;
    const std::shared_ptr<Storage>& s = src.storage();
    const size_t bytes = static_cast<size_t>(src.numel()) * dtype_size(src.dtype());
    if (value_of(s) >= 0 || s->serial() <= start_serial_ || bytes > kMaxConstantBytes ||
        bytes != dst.storage()->nbytes()) {
      unrecordable("a copy between devices (of a tensor an op made, or one made before the step)");
      return;
    }
    const int v = new_value(ValueKind::Constant, dst.storage());
    External& e = externals_[v];
    e.first_reader = "a copy to " + dst.device().str();
    const auto* p = static_cast<const unsigned char*>(s->data()) + src.offset() * dtype_size(src.dtype());
    e.snapshot.assign(p, p + bytes);
    e.copied = e.upload = true;
  }

  void before_draw(Generator& gen) override {
    draws_.emplace_back(&gen, gen.state());
    bool known = false;
    for (const RngStream& s : g_.rng) known = known || s.gen == &gen;
    if (!known) g_.rng.push_back({&gen, gen.offset(), gen.offset()});
    if (prev_observer_ != nullptr) prev_observer_->before_draw(gen);
  }

  /// The graph of what ran, once the step returned `results`.
  Captured finish(std::vector<Tensor> results, const std::vector<Tensor>& params) {
    Captured out;
    if (failure_.empty()) {
      for (const Tensor& t : results) g_.results.push_back(t.defined() ? existing(t, make_desc(t), t.layout(), "") : TensorRef{});
      for (size_t k = 0; k < params.size(); ++k) {
        const Tensor g = params[k].grad();
        if (g.defined()) g_.grads.emplace_back(k, existing(g, make_desc(g), g.layout(), ""));
      }
      classify();
    }
    out.results = std::move(results);
    // (the step's results are alive here: they are what the caller keeps)
    if (!failure_.empty()) {
      out.failure = failure_;
      return out;
    }
    for (RngStream& s : g_.rng) s.end = s.gen->offset();
    out.graph = std::move(g_);
    return out;
  }

 private:
  static TensorRef ref(int value, ingot_tensor_desc desc, std::shared_ptr<OpaqueLayout> layout) {
    desc.data = nullptr;
    if (layout == nullptr) desc.layout_handle = nullptr;
    return {value, desc, std::move(layout)};
  }

  /// Memory allocated during the step that no node has touched yet.
  bool allocated_unseen(const std::shared_ptr<Storage>& storage) const {
    if (storage->serial() <= start_serial_) return false;
    return value_of(storage) < 0;
  }

  int new_value(ValueKind kind, const std::shared_ptr<Storage>& storage) {
    Value v;
    v.kind = kind;
    v.nbytes = storage->nbytes();
    v.device = storage->device();
    g_.values.push_back(std::move(v));
    const int id = static_cast<int>(g_.values.size()) - 1;
    by_storage_[storage.get()] = id;
    weak_.push_back(storage);
    return id;
  }

  /// The value `storage` is, or -1 (never seen, or a freed storage's address reused).
  int value_of(const std::shared_ptr<Storage>& storage) const {
    const auto it = by_storage_.find(storage.get());
    return it != by_storage_.end() && weak_[it->second].lock() == storage ? it->second : -1;
  }

  TensorRef existing(const Tensor& t, const ingot_tensor_desc& desc, const std::shared_ptr<OpaqueLayout>& layout,
                     const std::string& reader) {
    return existing_storage(t.storage(), desc, layout, reader);
  }

  /// The value `storage` is; a storage no node made and not seen before is an external value.
  TensorRef existing_storage(const std::shared_ptr<Storage>& storage, const ingot_tensor_desc& desc,
                             const std::shared_ptr<OpaqueLayout>& layout, const std::string& reader) {
    if (const int known = value_of(storage); known >= 0) return ref(known, desc, layout);
    const int v = new_value(ValueKind::Constant, storage);  // State or Constant: decided at the end
    External& e = externals_[v];
    e.first_reader = reader;
    if (storage->device().is_cpu() && storage->nbytes() <= kMaxConstantBytes) {
      const auto* p = static_cast<const unsigned char*>(storage->data());
      e.snapshot.assign(p, p + storage->nbytes());
      e.copied = true;
    }
    return ref(v, desc, layout);
  }

  std::optional<RngUse> rng_use(uint64_t seed, uint64_t offset, size_t at) const {
    for (auto it = draws_.rbegin(); it != draws_.rend(); ++it) {
      if (it->second.seed != seed || it->second.offset != offset) continue;
      for (const RngStream& s : g_.rng)
        if (s.gen == it->first) return RngUse{it->first, offset - s.start, at};
    }
    return std::nullopt;
  }

  /// Internal values still referenced escape; external ones still referenced are state, the
  /// others constants (copied when first read).
  void classify() {
    for (size_t v = 0; v < g_.values.size(); ++v) {
      Value& val = g_.values[v];
      const std::shared_ptr<Storage> alive = weak_[v].lock();
      if (val.kind == ValueKind::Internal) {
        val.escapes = alive != nullptr;
      } else if (val.kind == ValueKind::Constant) {
        const External& e = externals_[static_cast<int>(v)];
        if (alive != nullptr) {
          val.kind = ValueKind::State;
          val.storage = alive;
        } else if (e.upload) {
          if (val.written) {
            failure_ = fmt::format("a {}-byte tensor the host code copied to {} is written in place", val.nbytes,
                                   val.device.str());
            return;
          }
          upload(val, e.snapshot);
        } else if (e.copied) {
          auto copy = Tensor::empty({static_cast<int64_t>(e.snapshot.size())}, DType::U8);
          if (!e.snapshot.empty()) std::memcpy(copy.storage()->data(), e.snapshot.data(), e.snapshot.size());
          val.storage = copy.storage();
        } else {
          failure_ = fmt::format(
              "the step's host code made a {}-byte tensor on {} without an op (first read by {}); a replay could not "
              "remake it",
              val.nbytes, val.device.str(), e.first_reader);
          return;
        }
      }
    }
  }

  /// The device's copy of an uploaded constant, made now (a backend copy: nothing is recorded).
  static void upload(Value& val, const std::vector<unsigned char>& bytes) {
    const Tensor copy = Tensor::empty({static_cast<int64_t>(val.nbytes)}, DType::U8, val.device);
    const Backend& b = BackendRegistry::instance().device_backend(val.device);
    if (!bytes.empty())
      b.copy(val.device.index, copy.storage()->data(), val.device.kind, bytes.data(), DeviceKind::CPU, bytes.size(),
             exec_context());
    val.storage = copy.storage();
    val.upload = bytes;
  }

  Graph g_;
  uint64_t start_serial_;
  OpRecorder* prev_recorder_;
  GeneratorObserver* prev_observer_;
  std::unordered_map<const Storage*, int> by_storage_;  ///< the latest value at each address
  std::vector<std::weak_ptr<Storage>> weak_;             ///< each value's storage, not kept alive
  std::unordered_map<int, External> externals_;
  std::vector<std::pair<Generator*, Generator::State>> draws_;
  std::string failure_;
};

}  // namespace

Captured capture(const std::function<std::vector<Tensor>()>& step, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& params) {
  Recorder recorder(inputs);
  std::vector<Tensor> results = step();
  return recorder.finish(std::move(results), params);
}

}  // namespace ingot::graph
