// The CPU instruction-set levels the test suite runs the numeric tests under (oneDNN's
// ONEDNN_MAX_CPU_ISA names), which of them this CPU has, and the level a test process runs at.
#pragma once

#include <optional>
#include <string>

namespace ingot::test {

/// oneDNN's dispatch levels, lowest first.
enum class CpuIsa { Sse41, Avx, Avx2, Avx2Vnni, Avx512Core, Avx512CoreVnni, Avx512CoreBf16, Avx512CoreAmx };

/// The level of an ONEDNN_MAX_CPU_ISA value ("AVX2", "avx512_core_vnni", ...); nullopt for "ALL",
/// "" and names this list does not know.
std::optional<CpuIsa> isa_from_name(const std::string& name);
std::string isa_name(CpuIsa isa);
/// Whether this CPU (its /proc/cpuinfo flags) has every instruction the level needs.
bool cpu_has(CpuIsa isa);
/// The level oneDNN dispatches to in this process: the best the CPU has, capped by
/// ONEDNN_MAX_CPU_ISA (or DNNL_MAX_CPU_ISA) when set.
CpuIsa effective_isa();
/// "" when this process can run at its ONEDNN_MAX_CPU_ISA level; else why not ("this CPU has no
/// AVX512_CORE_BF16 ..."), for the test main to report the case skipped.
std::string isa_level_unavailable();

}  // namespace ingot::test
