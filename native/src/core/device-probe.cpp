#include "rt/rt-device.h"

#include <string>

#include "cpu/q4-q8-dot.h"

#ifdef RT_WITH_CUDA
namespace rt {
device_probe rt_cuda_device_probe();
}
#endif

namespace rt {

namespace {
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
}  // namespace

std::string cuda_unavailable_reason(const std::string & error, bool insufficient_driver, int driver_version,
                                    int runtime_version) {
  if (driver_version <= 0) return "no NVIDIA driver found (the CUDA backend needs an NVIDIA GPU and its driver)";
  if (insufficient_driver && driver_version < runtime_version) {
    return "the NVIDIA driver supports CUDA " + cuda_version(driver_version) + " but this build needs CUDA " +
           cuda_version(runtime_version) + ": update the NVIDIA driver";
  }
  return "no CUDA device: " + error;
}

device_probe rt_device_probe() {
#ifdef RT_WITH_CUDA
  device_probe probe = rt_cuda_device_probe();
#else
  device_probe probe;
  probe.cuda_compiled = false;
  probe.error = "this build has no CUDA backend";
#endif
  probe.cpu_isa = cpu_isa_name(cpu_isa_active());
  return probe;
}

}  // namespace rt
