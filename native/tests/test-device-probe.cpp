// A probe must never crash and must always explain an empty device list, in words a user can act on.
#include <cstdio>
#include <string>

#include "rt/rt-device.h"

static int reason_failures() {
  struct row {
    const char * what;
    bool insufficient;
    int driver, runtime;
    const char * want;
  };
  const row rows[] = {
      {"no driver", true, 0, 13000, "no NVIDIA driver found (the CUDA backend needs an NVIDIA GPU and its driver)"},
      {"an old driver", true, 12040, 13000,
       "the NVIDIA driver supports CUDA 12.4 but this build needs CUDA 13.0: update the NVIDIA driver"},
      {"a new driver, another error", false, 13010, 13000, "no CUDA device: no CUDA-capable device is detected"},
      {"insufficient, yet not older", true, 13000, 13000, "no CUDA device: no CUDA-capable device is detected"},
  };
  int failures = 0;
  for (const row & r : rows) {
    const std::string got = rt::cuda_unavailable_reason("no CUDA-capable device is detected", r.insufficient, r.driver, r.runtime);
    if (got != r.want) {
      std::fprintf(stderr, "cuda_unavailable_reason, %s: got '%s', want '%s'\n", r.what, got.c_str(), r.want);
      ++failures;
    }
  }
  return failures;
}

int main() {
  if (reason_failures() != 0) return 1;
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
