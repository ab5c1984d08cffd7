// The memory report: a table of the stages' peaks per watched device, then, for each device, the
// largest tracked blocks of the stage where that device peaked.
#include "ingot/train/memory_report.h"

#include <fmt/format.h>

#include <ostream>

#include "ingot/io/atomic_write.h"

namespace ingot::train {
namespace {

std::string producer(const TrackedBlock& b) {
  if (b.op != nullptr) return fmt::format("{} {}", b.op, b.role);
  return std::string(b.role) + " (no op: parameters, batches, loaded or copied tensors)";
}

std::string percent(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

/// The largest blocks of the stage where `device` reached its highest peak.
std::string peak_tensors(const MemoryWatch& watch, size_t device_index) {
  const StageMemory* best = nullptr;
  for (const StageMemory& st : watch.stages())
    if (best == nullptr || st.devices[device_index].peak_allocated > best->devices[device_index].peak_allocated)
      best = &st;
  if (best == nullptr) return {};
  const DeviceMemory& d = best->devices[device_index];
  const TrackedPeak& t = d.tensors;
  std::string s = fmt::format("\n## Largest tensors at the peak on {}: {} allocated, in the {} stage\n\n",
                              d.device.str(), format_memory_bytes(d.peak_allocated), best->stage);
  int64_t listed = 0;
  for (const TrackedBlock& b : t.top) listed += b.bytes;
  s += fmt::format(
      "At that moment {} blocks allocated since the run began held {} (what was allocated before is not "
      "tracked); the {} largest hold {} of it:\n\n",
      t.blocks, format_memory_bytes(t.bytes), t.top.size(), percent(listed, t.bytes));
  s += "| # | size | produced by | shape | dtype |\n|---:|---:|---|---|---|\n";
  for (size_t i = 0; i < t.top.size(); ++i) {
    const TrackedBlock& b = t.top[i];
    s += fmt::format("| {} | {} | {} | {} | {} |\n", i + 1, format_memory_bytes(b.bytes), producer(b),
                     b.has_shape ? b.shape.str() : "-", b.has_shape ? std::string(dtype_name(b.dtype)) : "-");
  }
  return s;
}

}  // namespace

std::string memory_report(const MemoryWatch& watch, const std::string& run_name) {
  std::string s = fmt::format("# Memory of run {}\n\n", run_name);
  if (watch.stages().empty()) return s + "No stage was recorded.\n";
  const std::vector<DeviceMemory>& first = watch.stages().front().devices;
  s += "Per stage, the highest bytes held by live tensors (peak allocated, torch.cuda.max_memory_allocated) "
       "and the highest held by the allocator, its cache included (peak reserved, torch.cuda.memory_reserved). "
       "The caches are emptied after each stage.\n\n| stage |";
  for (const DeviceMemory& d : first) s += fmt::format(" {0} peak allocated | {0} peak reserved |", d.device.str());
  s += "\n|---|";
  for (size_t i = 0; i < first.size(); ++i) s += "---:|---:|";
  s += "\n";
  for (const StageMemory& st : watch.stages()) {
    s += fmt::format("| {} |", st.stage);
    for (const DeviceMemory& d : st.devices)
      s += fmt::format(" {} | {} |", format_memory_bytes(d.peak_allocated), format_memory_bytes(d.peak_reserved));
    s += "\n";
  }
  if (!watch.tracks_tensors()) return s;
  for (size_t i = 0; i < first.size(); ++i) s += peak_tensors(watch, i);
  return s;
}

void write_memory_report(MemoryWatch& watch, const std::string& run_name, const std::filesystem::path& file,
                         std::ostream& out) {
  watch.end_stage();
  const std::string text = memory_report(watch, run_name);
  io::atomic_write(file, text);
  out << "\n" << text << fmt::format("(written to {})\n", file.string());
  out.flush();
}

}  // namespace ingot::train
