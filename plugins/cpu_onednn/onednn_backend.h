// The cpu_onednn backend: one engine + stream, the plan cache, opaque layouts, the thread budget,
// and the op-family table (one small file per oneDNN primitive family, see op_families.h).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ingot/plugin/sdk.h"
#include "opaque_layout.h"
#include "packed_weights.h"
#include "plan_cache.h"

namespace ingot::onednn {

struct OpFamily;
class Exec;

class OnednnBackend final : public sdk::ComputeImpl {
 public:
  OnednnBackend();

  bool supports(const sdk::OpCall& call) override;
  void execute(const sdk::OpCall& call, const ingot_exec_context& ctx) override;
  bool choose_output_layout(const sdk::OpCall& call, ingot_tensor_desc* outputs, int index) override;
  void to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst, const ingot_exec_context& ctx) override;
  bool choose_input_layout(const sdk::OpCall& call, int index, ingot_tensor_desc* layout) override;
  void from_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst, const ingot_exec_context& ctx) override;
  bool runs_in_place(const sdk::OpCall& call, int out, int in) override;
  void layout_retain(void* handle) override { layouts_.retain(handle); }
  void layout_release(void* handle) override { layouts_.release(handle); }
  void plan_cache_stats(ingot_plan_cache_stats& stats) override;
  const char* impl_name(int32_t op) override;

  // ---- services for the op families ----
  const dnnl::engine& engine() const { return engine_; }
  const dnnl::stream& stream() const { return stream_; }
  OpaqueRegistry& layouts() { return layouts_; }
  /// Constant weights kept in a kernel's own format (the int8 convolutions').
  PackedWeights& packed_weights() { return packed_; }
  int threads() const { return threads_; }
  /// The cached plan for `key`; `build` runs on a miss. A build that throws is cached too, as a
  /// plan without primitive whose impl says why (so declined cases stay cheap to decline).
  template <class Build>
  std::shared_ptr<Plan> plan(std::string_view key, Build&& build) {
    if (std::shared_ptr<Plan> hit = cache_.find(key)) return hit;
    auto p = std::make_shared<Plan>();
    try {
      *p = build();
      if (p->pd) p->impl = p->pd.impl_info_str();
    } catch (const dnnl::error& e) {  // "unimplemented" and friends: decline, remembered
      *p = Plan{};
      p->impl = std::string("unsupported: ") + e.what();
    } catch (const sdk::Failure& e) {
      *p = Plan{};
      p->impl = std::string("unsupported: ") + e.what();
    }
    cache_.insert(key, p);
    return p;
  }
  /// A (cached) reorder between two memory descs.
  std::shared_ptr<Plan> reorder_plan(const dnnl::memory::desc& src, const dnnl::memory::desc& dst);
  /// The oneDNN desc of a tensor: strided md, or the desc behind one of our opaque handles;
  /// nullopt for another backend's opaque layout.
  std::optional<dnnl::memory::desc> md_of(const ingot_tensor_desc& d) const;
  /// The registered desc of an opaque tensor of ours, else nullptr.
  const dnnl::memory::desc* opaque_md(const ingot_tensor_desc& d) const;
  /// primitive_attr with a user-managed scratchpad (core's allocator supplies it).
  static dnnl::primitive_attr user_scratchpad_attr();
  /// Remembers which implementation ran `op` (reported by impl_name).
  void note_impl(int32_t op, const std::string& impl);

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  PlanCache cache_;
  OpaqueRegistry layouts_;
  PackedWeights packed_;
  int threads_ = 0;
  std::array<const OpFamily*, INGOT_OP_COUNT> families_{};
  std::array<std::string, INGOT_OP_COUNT> impl_names_{};
};

}  // namespace ingot::onednn
