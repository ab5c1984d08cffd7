// The thread budget handed to backends through the execution context.
#include "ingot/runtime/threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace ingot {
namespace {
std::atomic<int> g_threads{0};

int default_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

int num_threads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  if (n >= 1) return n;
  // read once: every op asks (through its execution context), and hardware_concurrency() reads
  // sysfs each time
  static const int fallback = default_threads();
  return fallback;
}

void set_num_threads(int n) { g_threads.store(n >= 1 ? n : 0, std::memory_order_relaxed); }

int usable_cores() {
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = std::max(1, CPU_COUNT(&set));
  // A CPU quota in microseconds per period: cgroup v2 cpu.max ("max 100000" = none), or v1
  // cpu.cfs_quota_us (-1 = none) and cpu.cfs_period_us.
  int64_t quota = -1, period = 0;
  std::ifstream v2("/sys/fs/cgroup/cpu.max");
  std::string q;
  if (v2 >> q >> period) {
    quota = q == "max" ? -1 : std::atoll(q.c_str());
  } else {
    std::ifstream v1q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), v1p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    if (!(v1q >> quota && v1p >> period)) quota = -1;
  }
  if (quota > 0 && period > 0)
    cores = static_cast<int>(std::min<int64_t>(cores, std::max<int64_t>(1, (quota + period - 1) / period)));
  return cores;
}

}  // namespace ingot
