// A stand-in for the driver's NVML with just the functions rt::nvml_process_memory loads, so its logic runs where
// no NVIDIA driver is installed. Built twice: with the _v3 process list (today's drivers) and, under
// FAKE_NVML_V2_ONLY, with only _v2 (drivers before 510). The test configures it through fake_nvml_configure.
#include <cstring>
#include <vector>

#ifdef _WIN32
#define FAKE_EXPORT extern "C" __declspec(dllexport)
#else
#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))
#endif

namespace {

struct process_info {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

struct fake_state {
  int init_result = 0;
  const char * bus_id = "00000000:65:00.0";
  std::vector<process_info> processes;
  int grow_by = 0;  // entries added after the caller learned the size, once
  int list_result = 0;
  int init_calls = 0, shutdown_calls = 0, list_calls = 0;
};

fake_state g;
int g_device_tag = 0;

int list_processes(void * device, unsigned int * count, void * out) {
  ++g.list_calls;
  if (device != &g_device_tag) return 4;  // NVML_ERROR_INVALID_ARGUMENT
  if (g.list_result != 0) return g.list_result;
  if (*count < g.processes.size()) {
    *count = static_cast<unsigned int>(g.processes.size());
    if (g.grow_by > 0) {
      for (int i = 0; i < g.grow_by; ++i) g.processes.push_back({100000u + static_cast<unsigned>(i), 1, 0, 0});
      g.grow_by = 0;
    }
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  *count = static_cast<unsigned int>(g.processes.size());
  if (!g.processes.empty()) std::memcpy(out, g.processes.data(), g.processes.size() * sizeof(process_info));
  return 0;
}

}  // namespace

FAKE_EXPORT void fake_nvml_configure(int init_result, const char * bus_id, int list_result, int grow_by) {
  g = fake_state{};
  g.init_result = init_result;
  g.bus_id = bus_id;
  g.list_result = list_result;
  g.grow_by = grow_by;
}

FAKE_EXPORT void fake_nvml_add_process(unsigned int pid, unsigned long long bytes) {
  g.processes.push_back({pid, bytes, 0, 0});
}

FAKE_EXPORT void fake_nvml_calls(int * init_calls, int * shutdown_calls, int * list_calls) {
  *init_calls = g.init_calls;
  *shutdown_calls = g.shutdown_calls;
  *list_calls = g.list_calls;
}

FAKE_EXPORT int nvmlInit_v2() {
  ++g.init_calls;
  return g.init_result;
}

FAKE_EXPORT int nvmlShutdown() {
  ++g.shutdown_calls;
  return 0;
}

FAKE_EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char * bus_id, void ** device) {
  // NVML accepts the 4- and 8-digit domain spellings alike; the fake compares what follows the domain.
  const char * a = std::strchr(bus_id, ':');
  const char * b = std::strchr(g.bus_id, ':');
  if (a == nullptr || b == nullptr || std::strcmp(a, b) != 0) return 6;  // NVML_ERROR_NOT_FOUND
  *device = &g_device_tag;
  return 0;
}

#ifndef FAKE_NVML_V2_ONLY
FAKE_EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void * device, unsigned int * count, void * out) {
  return list_processes(device, count, out);
}
#endif

FAKE_EXPORT int nvmlDeviceGetComputeRunningProcesses_v2(void * device, unsigned int * count, void * out) {
  return list_processes(device, count, out);
}
