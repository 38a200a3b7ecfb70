// Clocks. On a shared machine wall time measures the neighbours as much as the model; the CPU
// time of this process (all its threads) is what the work itself costs. Lessons report both.
// With more than one thread the CPU time also counts the pool's threads polling for their next
// job (up to 200 us a region, core/runtime/parallel.cpp), so costs compared with each other are
// timed on one thread (lessons/kit/timing.hpp).
#pragma once

namespace attnlab::lessons {

double wall_ms();  // a steady clock, in milliseconds
double cpu_ms();   // CPU time of this process, all threads, in milliseconds
// The 1-minute load average (runnable processes), or -1 where /proc/loadavg does not exist.
double load_average();

}  // namespace attnlab::lessons
