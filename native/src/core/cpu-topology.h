#pragma once
// The CPU backend's default thread count: one thread per physical core the process may run on. SMT siblings share a
// core's vector pipes, which the INT4 and FP16 kernels keep busy, and the pool's threads spin briefly at each step's
// barriers, taking issue slots from a sibling that still works; llama.cpp defaults to physical cores for the same
// reasons. A container's or `taskset`'s CPU set counts, not the host's.
#include <string>
#include <vector>

namespace rt {

/**
 * Distinct cores (physical package, core id) among the logical CPUs `cpus`, read from a sysfs cpu folder
 * (`root`/cpuN/topology/physical_package_id and core_id, as /sys/devices/system/cpu has them); 0 when a CPU's
 * topology cannot be read, so the caller falls back.
 */
int physical_cores_in_sysfs(const std::string & root, const std::vector<int> & cpus);

/**
 * Threads the CPU backend takes when not told: the physical cores this process may use (Linux: its affinity set and
 * sysfs; Windows: its affinity mask and the processor cores the system reports), else the logical CPUs it may use,
 * else std::thread::hardware_concurrency(); at least 1.
 */
int default_cpu_threads();

}  // namespace rt
