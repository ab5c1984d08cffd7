// INGOT_SIMD_CLONES: a function built for AVX-512 and AVX2 as well as the baseline x86-64, the
// variant picked at load time from the CPU (GCC's target_clones), so that its loops vectorize
// wide where the CPU allows while the plugin still runs on any x86-64.
#pragma once

#define INGOT_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
