#include "rt/rt-device.h"

#ifdef RT_WITH_CUDA
namespace rt {
device_probe rt_cuda_device_probe();
}
#endif

namespace rt {

device_probe rt_device_probe() {
#ifdef RT_WITH_CUDA
  return rt_cuda_device_probe();
#else
  device_probe probe;
  probe.cuda_compiled = false;
  probe.error = "this build has no CUDA backend";
  return probe;
#endif
}

}  // namespace rt
