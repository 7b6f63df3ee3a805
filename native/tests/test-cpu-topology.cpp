// The default CPU thread count: physical cores from a sysfs-shaped topology (SMT siblings counted once, the same core
// id on two packages counted twice, only the CPUs the process may use), a fallback when a topology is unreadable, and
// the live value within [1, logical CPUs].
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu-topology.h"
#include "test-helpers.h"

namespace fs = std::filesystem;

namespace {

struct logical_cpu {
  int package, core;
};

// A sysfs cpu folder with one entry per logical CPU; a negative package leaves that CPU's topology out.
std::string make_tree(const fs::path & root, const std::vector<logical_cpu> & cpus) {
  fs::remove_all(root);
  for (size_t i = 0; i < cpus.size(); ++i) {
    const fs::path dir = root / ("cpu" + std::to_string(i)) / "topology";
    fs::create_directories(dir);
    if (cpus[i].package < 0) continue;
    std::ofstream(dir / "physical_package_id") << cpus[i].package << "\n";
    std::ofstream(dir / "core_id") << cpus[i].core << "\n";
  }
  return root.string();
}

}  // namespace

int main() {
  const fs::path base = test_util::temp_dir("cpu-topology");

  struct row {
    const char * what;
    std::vector<logical_cpu> tree;
    std::vector<int> allowed;
    int want;
  };
  // SMT as Linux numbers it on x86: cpu0-3 are cores 0-3, cpu4-7 their siblings.
  const std::vector<logical_cpu> smt = {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 0}, {0, 1}, {0, 2}, {0, 3}};
  const row rows[] = {
      {"8 logical CPUs on 4 SMT cores", smt, {0, 1, 2, 3, 4, 5, 6, 7}, 4},
      {"a core and its sibling", smt, {0, 4}, 1},
      {"two cores without their siblings", smt, {0, 1}, 2},
      {"siblings of three cores", smt, {1, 5, 2, 6, 7}, 3},
      {"no SMT", {{0, 0}, {0, 1}, {0, 2}}, {0, 1, 2}, 3},
      {"the same core ids on two packages", {{0, 0}, {0, 1}, {1, 0}, {1, 1}}, {0, 1, 2, 3}, 4},
      {"sparse core ids (Intel hybrid, AMD CCDs)", {{0, 0}, {0, 8}, {0, 16}, {0, 0}}, {0, 1, 2, 3}, 3},
      {"one CPU's topology missing", {{0, 0}, {-1, 0}}, {0, 1}, 0},
      {"a CPU that is not in the tree", {{0, 0}}, {0, 1}, 0},
  };
  for (const row & r : rows) {
    const std::string root = make_tree(base, r.tree);
    const int got = rt::physical_cores_in_sysfs(root, r.allowed);
    CHECK(got == r.want, "%s: %d cores, want %d", r.what, got, r.want);
  }
  fs::remove_all(base);

  const int live = rt::default_cpu_threads();
  const int logical = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("default CPU threads here: %d (logical CPUs %d)\n", live, logical);
  CHECK(live >= 1 && live <= logical, "default_cpu_threads() = %d, want 1..%d", live, logical);
  return test_util::finish("test-cpu-topology");
}
