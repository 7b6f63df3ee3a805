// rt::nvml_process_memory against a fake NVML (tests/fake-nvml): which figure it reports, and why it reports none.
#include <cstdio>
#include <string>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#include <unistd.h>
#endif

#include "core/nvml-process-memory.h"
#include "test-helpers.h"

namespace {

struct fake_library {
  void (*configure)(int, const char *, int, int) = nullptr;
  void (*add_process)(unsigned int, unsigned long long) = nullptr;
  void (*calls)(int *, int *, int *) = nullptr;
};

void * raw_symbol(const std::string & path, const char * name) {
#ifdef _WIN32
  HMODULE m = LoadLibraryA(path.c_str());
  return m == nullptr ? nullptr : reinterpret_cast<void *>(GetProcAddress(m, name));
#else
  void * h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // the probe's dlopen of the same path shares this copy
  return h == nullptr ? nullptr : dlsym(h, name);
#endif
}

fake_library open_fake(const std::string & path) {
  fake_library f;
  f.configure = reinterpret_cast<decltype(f.configure)>(raw_symbol(path, "fake_nvml_configure"));
  f.add_process = reinterpret_cast<decltype(f.add_process)>(raw_symbol(path, "fake_nvml_add_process"));
  f.calls = reinterpret_cast<decltype(f.calls)>(raw_symbol(path, "fake_nvml_calls"));
  return f;
}

unsigned int my_pid() {
#ifdef _WIN32
  return static_cast<unsigned int>(GetCurrentProcessId());
#else
  return static_cast<unsigned int>(getpid());
#endif
}

bool contains(const std::string & s, const std::string & part) { return s.find(part) != std::string::npos; }

constexpr const char * BUS = "00000000:65:00.0";  // as NVML spells it
constexpr const char * CUDA_BUS = "0000:65:00.0";  // as cudaDeviceGetPCIBusId spells the same device
constexpr int INIT_FAILED = 999;
constexpr int LIST_FAILED = 15;  // NVML_ERROR_GPU_IS_LOST
constexpr unsigned long long NOT_AVAILABLE = ~0ULL;

struct listing_case {
  const char * name;
  std::vector<std::pair<unsigned int, unsigned long long>> processes;  // pid 0 stands for this process
  int grow_by;
  int list_result;
  bool expect_bytes;
  unsigned long long bytes;
  const char * why;  // part of why_unavailable() when no bytes
  int list_calls;
};

}  // namespace

int main(int argc, char ** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: test-nvml-process-memory FAKE_NVML FAKE_NVML_V2_ONLY\n");
    return 2;
  }
  const std::string v3_path = argv[1], v2_path = argv[2];
  fake_library fake = open_fake(v3_path);
  CHECK(fake.configure != nullptr && fake.add_process != nullptr && fake.calls != nullptr, "fake NVML %s",
        v3_path.c_str());
  if (test_util::g_failures != 0) return 1;
  const unsigned int me = my_pid();

  {
    rt::nvml_process_memory probe(CUDA_BUS, "no-such-nvml-library.so.1");
    CHECK(!probe.bytes().has_value(), "a missing library gives no figure");
    CHECK(contains(probe.why_unavailable(), "no-such-nvml-library.so.1"), "why: %s", probe.why_unavailable().c_str());
  }
  {
    fake.configure(INIT_FAILED, BUS, 0, 0);
    { rt::nvml_process_memory probe(CUDA_BUS, v3_path);
      CHECK(!probe.bytes().has_value(), "failed init gives no figure");
      CHECK(contains(probe.why_unavailable(), "initialise"), "why: %s", probe.why_unavailable().c_str()); }
    int init = 0, shut = 0, list = 0;
    fake.calls(&init, &shut, &list);
    CHECK(init == 1 && shut == 0 && list == 0, "failed init: init %d, shutdown %d, list %d", init, shut, list);
  }
  {
    fake.configure(0, "00000000:17:00.0", 0, 0);
    fake.add_process(me, 1000);
    { rt::nvml_process_memory probe(CUDA_BUS, v3_path);
      CHECK(!probe.bytes().has_value(), "an unknown bus id gives no figure");
      CHECK(contains(probe.why_unavailable(), CUDA_BUS), "why: %s", probe.why_unavailable().c_str()); }
    int init = 0, shut = 0, list = 0;
    fake.calls(&init, &shut, &list);
    CHECK(init == 1 && shut == 1 && list == 0, "unknown bus: init %d, shutdown %d, list %d", init, shut, list);
  }

  std::vector<std::pair<unsigned int, unsigned long long>> crowd;
  for (unsigned int i = 0; i < 100; ++i) crowd.push_back({50000 + i, 1ull << 20});
  auto with_me = [&](std::vector<std::pair<unsigned int, unsigned long long>> list, unsigned long long bytes) {
    list.push_back({0, bytes});
    return list;
  };
  const std::vector<listing_case> cases = {
      {"listed among others", {{4242, 7}, {0, 123456789}, {4343, 9}}, 0, 0, true, 123456789, "", 1},
      {"listed twice (MIG instances): summed", {{0, 1000}, {4242, 7}, {0, 2500}}, 0, 0, true, 3500, "", 1},
      {"not listed (another PID namespace)", {{4242, 7}}, 0, 0, false, 0, "does not list this process", 1},
      {"no processes at all", {}, 0, 0, false, 0, "does not list this process", 1},
      {"memory not available (WDDM)", {{0, NOT_AVAILABLE}}, 0, 0, false, 0, "per process", 1},
      {"more processes than the first buffer", with_me(crowd, 77), 0, 0, true, 77, "", 2},
      {"the list grows between calls", with_me(crowd, 78), 30, 0, true, 78, "", 3},
      {"listing fails", {{0, 5}}, 0, LIST_FAILED, false, 0, "could not list", 1},
  };
  for (const std::string & lib : {v3_path, v2_path}) {
    fake_library f = lib == v3_path ? fake : open_fake(lib);
    CHECK(f.configure != nullptr, "fake NVML %s", lib.c_str());
    if (f.configure == nullptr) continue;
    for (const listing_case & c : cases) {
      f.configure(0, BUS, c.list_result, c.grow_by);
      for (const auto & [pid, bytes] : c.processes) f.add_process(pid == 0 ? me : pid, bytes);
      {
        rt::nvml_process_memory probe(CUDA_BUS, lib);
        const std::optional<uint64_t> got = probe.bytes();
        CHECK(got.has_value() == c.expect_bytes, "%s (%s): figure %s", c.name, lib.c_str(),
              got ? "present" : probe.why_unavailable().c_str());
        if (got && c.expect_bytes) CHECK(*got == c.bytes, "%s: %llu bytes, want %llu", c.name,
                                          static_cast<unsigned long long>(*got), c.bytes);
        if (!c.expect_bytes) CHECK(contains(probe.why_unavailable(), c.why), "%s: why '%s' lacks '%s'", c.name,
                                   probe.why_unavailable().c_str(), c.why);
        if (c.expect_bytes) CHECK(probe.why_unavailable().empty(), "%s: why '%s'", c.name,
                                  probe.why_unavailable().c_str());
      }
      int init = 0, shut = 0, list = 0;
      f.calls(&init, &shut, &list);
      CHECK(init == 1 && shut == 1, "%s: init %d, shutdown %d", c.name, init, shut);
      CHECK(list == c.list_calls, "%s: %d list calls, want %d", c.name, list, c.list_calls);
    }
  }

  // Each call reads the driver's list anew.
  fake.configure(0, BUS, 0, 0);
  fake.add_process(me, 10);
  {
    rt::nvml_process_memory probe(CUDA_BUS, v3_path);
    CHECK(probe.bytes() == std::optional<uint64_t>(10), "first figure");
    fake.add_process(me, 5);
    CHECK(probe.bytes() == std::optional<uint64_t>(15), "the figure follows the driver's list");
  }

  return test_util::finish("test-nvml-process-memory");
}
