// The CUDA backend after a device fault, on the simulator's injected sticky faults (rt_sim::inject_fault): the
// request that meets the fault fails with the device's error, the backend records it and refuses every later request
// naming it (it never computes on a context in an unknown state), the expert cache publishes no copy that did not
// complete, and the model can still be destroyed. Simulator only: a GPU cannot be made to fault on demand. A fault
// is sticky for the process, so each case runs in its own process: `sim-test-gpu-fault <case>`. To add a case, add
// a name to main's choice.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "cuda-sim.h"
#include "rt/rt-runtime.h"
#include "test-helpers.h"

using namespace rt;
namespace fs = std::filesystem;

namespace {

const std::vector<int32_t> PROMPT = {3, 17, 42, 5, 9, 60, 11, 2, 33, 48, 7, 21};
const char * const DEVICE_ERROR = "illegal memory access";
const char * const REFUSAL = "unusable after an earlier device error";

bool has(const std::string & text, const char * part) { return text.find(part) != std::string::npos; }

// Greedy decode until a step fails or `steps` tokens were made; returns the first error (code ok if none).
rt_error decode_until_error(backend & be, int steps) {
  rt_error err;
  batch_entry b;
  b.seq_id = be.seq_create(err);
  if (b.seq_id < 0) return err;
  b.tokens = PROMPT;
  for (int s = 0; s < steps; ++s) {
    std::vector<int32_t> next;
    if (!be.forward_greedy({b}, next, err)) return err;
    b.start_pos += static_cast<int>(b.tokens.size());
    b.tokens = {next[0]};
  }
  be.seq_free(b.seq_id);
  return {};
}

// `slots` 0 is full residency; `fault_after` counts kernels or expert copies from the first request on.
// `seen_by` is part of the failing request's message: where the backend met the fault.
void fault_case(const model_weights & w, const char * name, int slots, rt_sim::fault_on what, uint64_t fault_after,
                const char * seen_by) {
  backend_options o;
  o.max_context = 64;
  o.expert_slots = slots;
  rt_error err;
  std::unique_ptr<backend> be = cuda_backend_create(w, o, err);
  CHECK(be != nullptr, "%s: create: %s", name, err.message.c_str());
  if (!be) return;
  CHECK(decode_until_error(*be, 3).code == rt_status::ok, "%s: a healthy backend decodes", name);
  CHECK(be->fault().empty(), "%s: no fault before the injected one", name);

  rt_sim::inject_fault(what, fault_after);
  const rt_error first = decode_until_error(*be, 16);
  CHECK(has(first.message, DEVICE_ERROR) && has(first.message, seen_by) && first.code == rt_status::device_fault,
        "%s: the failing request names the device error and '%s', got '%s' (%s)", name, seen_by, first.message.c_str(),
        rt_status_name(first.code));
  std::printf("%s: %s\n", name, first.message.c_str());
  CHECK(has(be->fault(), DEVICE_ERROR), "%s: the backend records the fault, got '%s'", name, be->fault().c_str());

  // Every later request is refused with the recorded fault, before touching the device.
  const int seq = be->seq_create(err);
  CHECK(seq < 0 && has(err.message, REFUSAL) && has(err.message, DEVICE_ERROR) && err.code == rt_status::device_fault, "%s: seq_create after the fault: '%s'", name, err.message.c_str());
  std::vector<std::vector<float>> logits;
  batch_entry b;
  b.seq_id = 0;
  b.tokens = PROMPT;
  CHECK(!be->forward({b}, false, logits, err) && has(err.message, REFUSAL) && err.code == rt_status::device_fault, "%s: forward after the fault: '%s'", name,
        err.message.c_str());
  const backend_counters c = be->counters();
  CHECK(c.d2h_bytes == 0, "%s: no expert bytes ever copied back", name);
  be.reset();  // frees everything on a faulted context without throwing or aborting
}

}  // namespace

int main(int argc, char ** argv) {
  const std::string which = argc == 2 ? argv[1] : "";
  if (which != "kernel" && which != "expert-copy") {
    std::fprintf(stderr, "usage: sim-test-gpu-fault kernel|expert-copy\n");
    return 2;
  }
  const fs::path root = test_util::temp_dir("gpu-fault-" + which);
  test_util::tiny_config c;
  c.vocab = 72;
  test_util::write_tiny_model(root / "src", c, 21);
  pack_options po;
  po.src_dir = (root / "src").string();
  po.dst_dir = (root / "int4").string();
  po.threads = 2;
  pack_result pr;
  rt_error err;
  CHECK(rt_qpacked_pack(po, nullptr, nullptr, pr, err), "pack: %s", err.message.c_str());
  std::unique_ptr<model_weights> w = model_weights_load(po.dst_dir, weights_kind::int4, err.message);
  CHECK(w != nullptr, "load: %s", err.message.c_str());
  if (w) {
    if (which == "kernel") {
      // A kernel faults in the middle of decoding (full residency, the step may be a graph replay).
      fault_case(*w, "full residency, kernel fault", 0, rt_sim::fault_on::kernel, 40, "CUDA backend");
    } else {
      // An expert copy faults: the copy engine's wait or query reports it, the cache discards the slot.
      fault_case(*w, "partial residency, expert copy fault", 2, rt_sim::fault_on::pinned_h2d, 1, "copy");
    }
  }
  fs::remove_all(root);
  return test_util::finish("sim-test-gpu-fault");
}
