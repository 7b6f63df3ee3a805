#include "core/cpu-topology.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <sched.h>
#elif defined(_WIN32)
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#endif

namespace rt {

namespace {

bool read_int(const std::string & path, long & out) {
  std::ifstream in(path);
  return static_cast<bool>(in >> out);
}

int hardware_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

#if defined(_WIN32)
int windows_cores() {
  DWORD_PTR process_mask = 0, system_mask = 0;
  const bool masked = GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask) && process_mask != 0;
  DWORD len = 0;
  GetLogicalProcessorInformationEx(RelationProcessorCore, nullptr, &len);
  if (len == 0) return 0;
  std::vector<char> buf(len);
  auto * info = reinterpret_cast<SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *>(buf.data());
  if (!GetLogicalProcessorInformationEx(RelationProcessorCore, info, &len)) return 0;
  int cores = 0;
  for (DWORD off = 0; off < len;) {
    const auto * e = reinterpret_cast<const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *>(buf.data() + off);
    if (e->Relationship == RelationProcessorCore) {
      const PROCESSOR_RELATIONSHIP & p = e->Processor;
      // The process affinity mask speaks for its own processor group (group 0 unless the system has more than 64
      // logical CPUs); cores of other groups count as usable.
      const bool usable = !masked || p.GroupMask[0].Group != 0 || (p.GroupMask[0].Mask & process_mask) != 0;
      cores += usable ? 1 : 0;
    }
    if (e->Size == 0) break;
    off += e->Size;
  }
  return cores;
}
#endif

}  // namespace

int physical_cores_in_sysfs(const std::string & root, const std::vector<int> & cpus) {
  std::set<std::pair<long, long>> cores;
  for (int cpu : cpus) {
    const std::string dir = root + "/cpu" + std::to_string(cpu) + "/topology/";
    long package = 0, core = 0;
    if (!read_int(dir + "physical_package_id", package) || !read_int(dir + "core_id", core)) return 0;
    cores.emplace(package, core);
  }
  return static_cast<int>(cores.size());
}

int default_cpu_threads() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return hardware_threads();
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty()) return hardware_threads();
  const int cores = physical_cores_in_sysfs("/sys/devices/system/cpu", cpus);
  return cores > 0 ? cores : static_cast<int>(cpus.size());
#elif defined(_WIN32)
  const int cores = windows_cores();
  return cores > 0 ? cores : hardware_threads();
#else
  return hardware_threads();
#endif
}

}  // namespace rt
