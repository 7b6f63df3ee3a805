// A probe must never crash and must always explain an empty device list.
#include <cstdio>

#include "rt/rt-device.h"

int main() {
  rt::device_probe probe = rt::rt_device_probe();
#ifdef RT_WITH_CUDA
  if (!probe.cuda_compiled) { std::fprintf(stderr, "built with CUDA but probe says not compiled\n"); return 1; }
#else
  if (probe.cuda_compiled) { std::fprintf(stderr, "built without CUDA but probe says compiled\n"); return 1; }
#endif
  if (probe.devices.empty() && probe.error.empty()) { std::fprintf(stderr, "empty device list without a reason\n"); return 1; }
  for (const auto & d : probe.devices) {
    if (d.name.empty() || d.total_memory_bytes == 0) { std::fprintf(stderr, "device %d has no name or memory\n", d.index); return 1; }
  }
  std::printf("devices: %zu (%s)\n", probe.devices.size(), probe.error.c_str());
  return 0;
}
