// The one thread budget: only the compute thread calls backends, with this many threads.
#pragma once

namespace ingot {

/// Threads given to backends: set_num_threads(n) if called, else OMP_NUM_THREADS, else cores.
int num_threads();
/// Sets the budget (n >= 1); 0 returns to the default.
void set_num_threads(int n);
/// Cores this process may run on: its CPU affinity mask, lowered to a cgroup CPU quota (v2
/// cpu.max) rounded up. More threads than this only contend.
int usable_cores();

}  // namespace ingot
