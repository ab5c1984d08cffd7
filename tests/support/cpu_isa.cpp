// CPU instruction-set levels for the suite's ISA matrix (see cpu_isa.h), from /proc/cpuinfo.
#include "cpu_isa.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace ingot::test {
namespace {

struct Level {
  CpuIsa isa;
  const char* name;
  std::vector<const char*> flags;  ///< /proc/cpuinfo flags the level needs (on top of the level below)
};

const std::vector<Level>& levels() {
  static const std::vector<Level> l{
      {CpuIsa::Sse41, "SSE41", {"sse4_1"}},
      {CpuIsa::Avx, "AVX", {"avx"}},
      {CpuIsa::Avx2, "AVX2", {"avx2", "fma"}},
      {CpuIsa::Avx2Vnni, "AVX2_VNNI", {"avx_vnni"}},
      {CpuIsa::Avx512Core, "AVX512_CORE", {"avx512f", "avx512bw", "avx512vl", "avx512dq"}},
      {CpuIsa::Avx512CoreVnni, "AVX512_CORE_VNNI", {"avx512_vnni"}},
      {CpuIsa::Avx512CoreBf16, "AVX512_CORE_BF16", {"avx512_bf16"}},
      {CpuIsa::Avx512CoreAmx, "AVX512_CORE_AMX", {"amx_tile", "amx_int8", "amx_bf16"}},
  };
  return l;
}

const std::set<std::string>& cpu_flags() {
  static const std::set<std::string> flags = [] {
    std::set<std::string> f;
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) f.insert(w);
      break;
    }
    return f;
  }();
  return flags;
}

/// The capped level named in the environment, if any.
std::optional<CpuIsa> env_cap() {
  for (const char* var : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return isa_from_name(v);
  }
  return std::nullopt;
}

}  // namespace

std::optional<CpuIsa> isa_from_name(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const Level& l : levels())
    if (upper == l.name) return l.isa;
  return std::nullopt;
}

std::string isa_name(CpuIsa isa) { return levels()[static_cast<size_t>(isa)].name; }

bool cpu_has(CpuIsa isa) {
  // AVX2_VNNI is a side branch: the AVX-512 levels do not need it.
  for (const Level& l : levels()) {
    if (l.isa > isa) break;
    if (l.isa == CpuIsa::Avx2Vnni && isa != CpuIsa::Avx2Vnni) continue;
    for (const char* f : l.flags)
      if (cpu_flags().count(f) == 0) return false;
  }
  return true;
}

CpuIsa effective_isa() {
  const std::optional<CpuIsa> cap = env_cap();
  CpuIsa best = CpuIsa::Sse41;
  for (const Level& l : levels())
    if ((!cap || l.isa <= *cap) && cpu_has(l.isa)) best = l.isa;
  return best;
}

std::string isa_level_unavailable() {
  const std::optional<CpuIsa> cap = env_cap();
  if (!cap || cpu_has(*cap)) return "";
  return "this CPU has no " + isa_name(*cap) + " (ONEDNN_MAX_CPU_ISA); it runs at " + isa_name(effective_isa()) +
         ", which the suite tests under that level's own name or as the CPU's best";
}

}  // namespace ingot::test
