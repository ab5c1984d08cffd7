// The thread budget handed to backends through the execution context.
#include "ingot/runtime/threads.h"

#include <atomic>
#include <cstdlib>
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
  return n >= 1 ? n : default_threads();
}

void set_num_threads(int n) { g_threads.store(n >= 1 ? n : 0, std::memory_order_relaxed); }

}  // namespace ingot
