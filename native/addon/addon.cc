#include <napi.h>

#include "model-wrap.h"
#include "pack-wrap.h"
#include "rt/rt-device.h"

namespace {

Napi::Value probe_devices(const Napi::CallbackInfo & info) {
  Napi::Env env = info.Env();
  rt::device_probe probe = rt::rt_device_probe();
  Napi::Object out = Napi::Object::New(env);
  out.Set("cudaCompiled", probe.cuda_compiled);
  out.Set("error", probe.error);
  Napi::Array devices = Napi::Array::New(env, probe.devices.size());
  for (size_t i = 0; i < probe.devices.size(); ++i) {
    const rt::device_info & d = probe.devices[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("index", d.index);
    o.Set("name", d.name);
    o.Set("totalMemoryBytes", static_cast<double>(d.total_memory_bytes));
    o.Set("freeMemoryBytes", static_cast<double>(d.free_memory_bytes));
    o.Set("computeCapability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor));
    o.Set("driverVersion", d.driver_version);
    devices.Set(static_cast<uint32_t>(i), o);
  }
  out.Set("devices", devices);
  out.Set("cpuIsa", probe.cpu_isa);
  return out;
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("probeDevices", Napi::Function::New(env, probe_devices));
  exports.Set("abiVersion", Napi::Number::New(env, 2));
  horizon_addon::model_wrap_init(env, exports);
  horizon_addon::pack_wrap_init(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(horizon_runtime, init)
