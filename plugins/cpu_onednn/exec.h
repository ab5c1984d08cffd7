// Exec: one execute() call's host services — a single workspace block from core's allocator,
// carved into scratchpad and temporary buffers, and binding data pointers to a plan's memories.
#pragma once

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#include <vector>

#include "ingot/plugin/sdk.h"
#include "onednn_backend.h"

namespace ingot::onednn {

class Exec {
 public:
  Exec(OnednnBackend& backend, const ingot_exec_context& ctx) : backend_(backend), ctx_(ctx) {}

  OnednnBackend& backend() { return backend_; }
  /// Memory-bound ops on fewer elements than this run on one thread: an OpenMP fork/join costs
  /// more than the work (PyTorch's grain size for the same reason).
  static constexpr int64_t kSerialGrain = 32768;
  /// Runs the primitives of this call on one thread when `elements` is below the grain size.
  void serial_if_small(int64_t elements) { serial_ = elements < kSerialGrain && backend_.threads() > 1; }
  /// Reserves `bytes` (64-byte aligned) of the workspace; returns a slot for ptr().
  size_t reserve(size_t bytes) {
    offsets_.push_back(total_);
    total_ += (bytes + 63) / 64 * 64;
    return offsets_.size() - 1;
  }
  /// Fetches the workspace once every reserve() is done.
  void allocate() {
    if (total_ == 0) return;
    if (ctx_.workspace == nullptr) {
      own_.resize(total_ + 64);
      base_ = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(own_.data()) + 63) / 64 * 64);
      return;
    }
    void* p = nullptr;
    ingot_status* s = ctx_.workspace(ctx_.host, total_, &p);
    if (s != nullptr) {
      std::string msg = std::string("cpu_onednn: workspace of ") + std::to_string(total_) +
                        " bytes: " + (s->message != nullptr ? s->message : "");
      int32_t code = s->code;
      if (s->release != nullptr) s->release(s);
      throw sdk::Failure(code, msg);
    }
    base_ = static_cast<char*>(p);
  }
  void* ptr(size_t slot) const { return base_ + offsets_[slot]; }

  /// Points the plan's memory for `arg` (desc `md`) at `data`.
  void bind(Plan& plan, int arg, const dnnl::memory::desc& md, void* data) {
    auto it = plan.args.find(arg);
    if (it == plan.args.end()) {
      plan.args.emplace(arg, dnnl::memory(md, backend_.engine(), data));
    } else {
      it->second.set_data_handle(data);
    }
  }
  /// Like bind(), with the desc the primitive expects for `arg`.
  void bind(Plan& plan, int arg, void* data) {
    auto it = plan.args.find(arg);
    if (it == plan.args.end()) {
      plan.args.emplace(arg, dnnl::memory(plan.pd.query_md(dnnl::query::exec_arg_md, arg), backend_.engine(), data));
    } else {
      it->second.set_data_handle(data);
    }
  }
  /// Binds the scratchpad slot (if the plan has one) and executes the primitive.
  void run(Plan& plan, int32_t op, size_t scratch_slot = npos) {
    if (scratch_slot != npos) bind(plan, DNNL_ARG_SCRATCHPAD, plan.pd.scratchpad_desc(), ptr(scratch_slot));
    backend_.note_impl(op, plan.impl);
    execute(plan.prim, plan.args);
  }
  /// Reserves the plan's scratchpad; npos when it needs none.
  size_t reserve_scratchpad(const Plan& plan) {
    size_t bytes = plan.scratchpad_bytes();
    return bytes == 0 ? npos : reserve(bytes);
  }
  /// Reorders `src` (desc src_md) into `dst` (desc dst_md).
  void reorder(const dnnl::memory::desc& src_md, void* src, const dnnl::memory::desc& dst_md, void* dst) {
    std::shared_ptr<Plan> r = backend_.reorder_plan(src_md, dst_md);
    if (!r->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn reorder: " + r->impl);
    bind(*r, DNNL_ARG_FROM, src_md, src);
    bind(*r, DNNL_ARG_TO, dst_md, dst);
    execute(r->prim, r->args);
  }

  static constexpr size_t npos = static_cast<size_t>(-1);

  /// A tensor a primitive reads or writes in layout `want` while it lives in `have` at `user`:
  /// the tensor's own buffer when the layouts agree, else a workspace buffer.
  struct Staged {
    dnnl::memory::desc have, want;
    void* user = nullptr;
    size_t slot = npos;
  };
  /// Reserves the workspace buffer a differing layout needs (call before allocate()).
  Staged stage(const dnnl::memory::desc& have, void* user, const dnnl::memory::desc& want) {
    Staged s{have, want, user};
    if (have != want) s.slot = reserve(want.get_size());
    return s;
  }
  /// An input in `want`: reordered into the workspace buffer when it has one.
  void* staged_input(const Staged& s) {
    if (s.slot == npos) return s.user;
    reorder(s.have, s.user, s.want, ptr(s.slot));
    return ptr(s.slot);
  }
  /// Where an output is written in `want`; flush() then reorders it to the tensor.
  void* staged_output(const Staged& s) const { return s.slot == npos ? s.user : ptr(s.slot); }
  void flush(const Staged& s) {
    if (s.slot != npos) reorder(s.want, ptr(s.slot), s.have, s.user);
  }

 private:
  void execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args) {
    if (!serial_) return prim.execute(backend_.stream(), args);
    omp_set_num_threads(1);
    struct Restore {
      int n;
      ~Restore() { omp_set_num_threads(n); }
    } restore{backend_.threads()};
    prim.execute(backend_.stream(), args);
  }

  bool serial_ = false;
  OnednnBackend& backend_;
  const ingot_exec_context& ctx_;
  std::vector<size_t> offsets_;
  size_t total_ = 0;
  char* base_ = nullptr;
  std::vector<char> own_;
};

}  // namespace ingot::onednn
