// The CUDA backend: qpacked-v2 INT4 experts read directly by W4A16 kernels, FP16 non-routed weights, FP16 KV caches
// and an FP32 residual stream. Experts are fully resident when the budget allows, otherwise served by
// "resident-qpacked-cache-v1" (core/expert-cache.h): a complete host copy, a fixed number of GPU slots per layer,
// host-to-device copies only, stages when a step routes more experts than a layer has slots.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/batch-check.h"
#include "core/expert-cache.h"
#include "core/nvml-process-memory.h"
#include "cuda/attention.cuh"
#include "cuda/embedding.cuh"
#include "cuda/launch.cuh"
#include "cuda/lm-screen.cuh"
#include "cuda/matmul-f16.cuh"
#include "cuda/matmul-w4a16.cuh"
#include "cuda/moe-reduce.cuh"
#include "cuda/qk-norm-rope.cuh"
#include "cuda/router-topk.cuh"

namespace rt {

namespace {

// A failure inside a step or the load, with the status it reports.
class cuda_failure : public std::runtime_error {
 public:
  cuda_failure(rt_status code, const std::string & what) : std::runtime_error(what), code(code) {}
  rt_status code;
};

void ck(cudaError_t err, const char * what) {
  if (err == cudaSuccess) return;
  throw cuda_failure(err == cudaErrorMemoryAllocation ? rt_status::out_of_memory : rt_status::device_fault,
                     std::string("CUDA backend: ") + what + ": " + cudaGetErrorString(err));
}

rt_status status_of(const std::exception & e) {
  if (const auto * f = dynamic_cast<const cuda_failure *>(&e)) return f->code;
  if (dynamic_cast<const std::bad_alloc *>(&e) != nullptr) return rt_status::out_of_memory;
  return rt_status::internal;
}

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

uint16_t half_bits(float f) {
  const __half h = __float2half_rn(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// FP16 bits of a whole float tensor (F16 copied, BF16/F32 rounded to nearest even).
void to_half(const tensor_view & t, uint16_t * out) {
  const size_t n = static_cast<size_t>(t.numel());
  switch (t.type) {
    case dtype::f16:
      std::memcpy(out, t.data, n * 2);
      return;
    case dtype::bf16: {
      const uint16_t * src = static_cast<const uint16_t *>(t.data);
      for (size_t i = 0; i < n; ++i) out[i] = half_bits(from_bf16(src[i]));
      return;
    }
    case dtype::f32: {
      const float * src = static_cast<const float *>(t.data);
      for (size_t i = 0; i < n; ++i) out[i] = half_bits(src[i]);
      return;
    }
    case dtype::u8:
      break;
  }
  throw cuda_failure(rt_status::model_invalid, "CUDA backend: tensor " + t.name + " in " + t.file + " is not a float tensor");
}

// Device memory owned by the backend; every allocation goes through here so the peak can be sampled.
class device_arena {
 public:
  ~device_arena() {
    for (const auto & [p, bytes] : blocks_) cudaFree(p);
  }
  void * alloc(size_t bytes, const char * what) {
    void * p = nullptr;
    const size_t n = std::max<size_t>(bytes, 16);
    ck(cudaMalloc(&p, n), what);
    blocks_.emplace(p, n);
    held_ += n;
    sample();
    return p;
  }
  void release(void * p) {
    auto it = blocks_.find(p);
    if (it == blocks_.end()) return;
    cudaFree(p);
    held_ -= it->second;
    blocks_.erase(it);
  }
  /** Bytes allocated and not yet released. */
  uint64_t held() const { return held_.load(); }
  /** Prefer NVML's figure for this process; `pci_bus_id` names the device to NVML. */
  void use_nvml(const std::string & pci_bus_id) { nvml_ = std::make_unique<nvml_process_memory>(pci_bus_id); }
  // The scope is settled at the first sample and kept, so that one peak never mixes the two figures. A step that only
  // replayed decode graphs allocated nothing, so `may_have_allocated` false spares the per-process query (a driver
  // round trip on every decoded token) once the scope is settled.
  void sample(bool may_have_allocated = true) {
    if (nvml_) {
      if (per_process_ && !may_have_allocated) return;
      if (const std::optional<uint64_t> mine = nvml_->bytes()) {
        per_process_ = true;
        peak_ = std::max<uint64_t>(peak_, *mine);
        return;
      }
      if (per_process_) return;  // a transient failure after figures came: skip this sample
      nvml_.reset();
    }
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) peak_ = std::max<uint64_t>(peak_, total_b - free_b);
  }
  uint64_t peak() const { return peak_; }
  /** True when peak() is this process's memory (NVML); false when it is the whole device's used memory. */
  bool per_process() const { return per_process_; }
  void reset_peak() {
    peak_ = 0;
    sample();
  }

 private:
  std::map<void *, size_t> blocks_;  // each allocation and its size
  std::atomic<uint64_t> held_{0};     // read by info() on another thread while a generate allocates
  uint64_t peak_ = 0;
  std::unique_ptr<nvml_process_memory> nvml_;
  bool per_process_ = false;
};

// Offsets of one packed expert inside a slot: [gate|up] qweight as one [2I, H/2] matrix, its scales, then down.
struct expert_layout {
  size_t q_gu = 0, s_gu = 0, q_d = 0, s_d = 0, bytes = 0;
  size_t q_gu_bytes = 0, s_gu_bytes = 0, q_d_bytes = 0, s_d_bytes = 0;
};

expert_layout make_layout(int hidden, int inter, int group) {
  expert_layout l;
  l.q_gu_bytes = static_cast<size_t>(2) * inter * hidden / 2;
  l.s_gu_bytes = static_cast<size_t>(2) * inter * (hidden / group) * 2;
  l.q_d_bytes = static_cast<size_t>(hidden) * inter / 2;
  l.s_d_bytes = static_cast<size_t>(hidden) * (inter / group) * 2;
  l.q_gu = 0;
  l.s_gu = align_up(l.q_gu + l.q_gu_bytes, 256);
  l.q_d = align_up(l.s_gu + l.s_gu_bytes, 256);
  l.s_d = align_up(l.q_d + l.q_d_bytes, 256);
  l.bytes = align_up(l.s_d + l.s_d_bytes, 256);
  return l;
}

// Writes expert e of layer li in slot layout at dst (host memory).
void pack_expert(const layer_weights & lw, int e, const expert_layout & l, uint8_t * dst) {
  std::memcpy(dst + l.q_gu, lw.expert_gate[e]->data, l.q_gu_bytes / 2);
  std::memcpy(dst + l.q_gu + l.q_gu_bytes / 2, lw.expert_up[e]->data, l.q_gu_bytes / 2);
  std::memcpy(dst + l.s_gu, lw.expert_gate_scales[e]->data, l.s_gu_bytes / 2);
  std::memcpy(dst + l.s_gu + l.s_gu_bytes / 2, lw.expert_up_scales[e]->data, l.s_gu_bytes / 2);
  std::memcpy(dst + l.q_d, lw.expert_down[e]->data, l.q_d_bytes);
  std::memcpy(dst + l.s_d, lw.expert_down_scales[e]->data, l.s_d_bytes);
}

struct layer_dev {
  __half * input_norm = nullptr;
  __half * post_norm = nullptr;
  __half * q_norm = nullptr;
  __half * k_norm = nullptr;
  __half * wqkv = nullptr;
  __half * wo = nullptr;
  __half * router = nullptr;
};

// Releases a lease when the stage that holds it ends, also by an exception.
class lease_guard {
 public:
  lease_guard(expert_cache & cache, const expert_lease & lease) : cache_(cache), lease_(lease) {}
  lease_guard(const lease_guard &) = delete;
  lease_guard & operator=(const lease_guard &) = delete;
  ~lease_guard() { cache_.release(lease_); }

 private:
  expert_cache & cache_;
  const expert_lease & lease_;
};

// Host-to-device copies of experts into GPU slots, on their own stream; never copies device memory back.
class cuda_copy_engine final : public expert_copy_engine {
 public:
  cuda_copy_engine(const uint8_t * host_copy, bool host_pinned, size_t expert_bytes, int n_experts, int staging_count,
                   uint8_t * slot_base, int slots_per_layer)
      : host_(host_copy), pinned_(host_pinned), expert_bytes_(expert_bytes), n_experts_(n_experts),
        slot_base_(slot_base), slots_per_layer_(slots_per_layer) {
    try {
      ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "create copy stream");
      if (!pinned_) {
        for (int i = 0; i < staging_count; ++i) {
          void * p = nullptr;
          ck(cudaHostAlloc(&p, expert_bytes, cudaHostAllocDefault), "reserve pinned staging");
          staging_.push_back(static_cast<uint8_t *>(p));
        }
      }
    } catch (...) {
      release();  // a constructor that throws gets no destructor call
      throw;
    }
  }
  ~cuda_copy_engine() override { release(); }

  void init_slot_events(int n_layers) {
    slot_events_.resize(static_cast<size_t>(n_layers) * slots_per_layer_);
    for (cudaEvent_t & e : slot_events_) ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "create slot event");
  }
  cudaEvent_t slot_event(int layer, int slot) { return slot_events_[static_cast<size_t>(layer) * slots_per_layer_ + slot]; }
  uint8_t * slot_ptr(int layer, int slot) const {
    return slot_base_ + (static_cast<size_t>(layer) * slots_per_layer_ + slot) * expert_bytes_;
  }

  void start_copy(const expert_copy_request & r) override {
    const uint8_t * src = host_ + (static_cast<size_t>(r.layer) * n_experts_ + r.expert) * expert_bytes_;
    // The slot's previous contents may still be read by kernels launched before the lease was released.
    ck(cudaStreamWaitEvent(stream_, slot_event(r.layer, r.slot), 0), "order copy after slot readers");
    if (!pinned_) {
      std::memcpy(staging_[static_cast<size_t>(r.staging)], src, r.bytes);
      src = staging_[static_cast<size_t>(r.staging)];
    }
    ck(cudaMemcpyAsync(slot_ptr(r.layer, r.slot), src, r.bytes, cudaMemcpyHostToDevice, stream_), "copy expert");
    cudaEvent_t ev;
    ck(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "create copy event");
    events_.push_back({r.ticket, ev});
    ck(cudaEventRecord(ev, stream_), "record copy event");
  }
  bool copy_done(uint64_t ticket) override {
    auto it = find(ticket);
    if (it == events_.end()) return true;
    const cudaError_t st = cudaEventQuery(it->second);
    if (st == cudaErrorNotReady) return false;
    ck(st, "query copy event");
    drop(it);
    return true;
  }
  void wait_copy(uint64_t ticket) override {
    auto it = find(ticket);
    if (it == events_.end()) return;
    ck(cudaEventSynchronize(it->second), "wait for expert copy");
    drop(it);
  }

 private:
  using entry = std::pair<uint64_t, cudaEvent_t>;
  std::vector<entry>::iterator find(uint64_t t) {
    return std::find_if(events_.begin(), events_.end(), [&](const entry & e) { return e.first == t; });
  }
  void drop(std::vector<entry>::iterator it) {
    cudaEventDestroy(it->second);
    events_.erase(it);
  }

  void release() {
    for (auto & kv : events_) cudaEventDestroy(kv.second);
    for (cudaEvent_t e : slot_events_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (uint8_t * p : staging_) cudaFreeHost(p);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  const uint8_t * host_;
  bool pinned_;
  size_t expert_bytes_;
  int n_experts_;
  uint8_t * slot_base_;
  int slots_per_layer_;
  cudaStream_t stream_ = nullptr;
  std::vector<uint8_t *> staging_;
  std::vector<entry> events_;
  std::vector<cudaEvent_t> slot_events_;
};

constexpr int MAX_STEP_TOKENS = 1024;  // a larger batch runs as several steps of at most this many tokens
constexpr int MAX_SEQUENCES = 1024;
constexpr size_t MAX_GRAPH_SEQUENCES = 64;

class cuda_backend final : public backend {
 public:
  cuda_backend() = default;
  ~cuda_backend() override {
    cudaSetDevice(device_);
    drop_graphs();
    engine_.reset();
    cache_.reset();
    if (host_copy_ != nullptr) {
      if (host_pinned_) cudaFreeHost(host_copy_);
      else std::free(host_copy_);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  bool init(const model_weights & w, const backend_options & o, rt_error & error);

  backend_kind kind() const override { return backend_kind::cuda; }
  int device_expert_slots() const override { return slots_per_layer_; }
  uint64_t device_bytes() const override { return arena_.held(); }
  int decode_step_ops() const override { return decode_step_ops_.load(); }
  bool programmatic_launch() const override { return use_pdl_; }
  int sequence_limit() const override { return MAX_SEQUENCES; }
  int seq_create(rt_error & error) override;
  void seq_free(int seq_id) override;
  int seq_length(int seq_id) const override {
    return seq_id >= 0 && seq_id < static_cast<int>(seqs_.size()) && seqs_[seq_id].used ? seqs_[seq_id].length : -1;
  }
  bool forward(const std::vector<batch_entry> & batch, bool all_positions, std::vector<std::vector<float>> & logits,
               rt_error & error) override;
  bool forward_greedy(const std::vector<batch_entry> & batch, std::vector<int32_t> & next, rt_error & error) override;
  std::string fault() const override {
    std::lock_guard<std::mutex> hold(fault_mutex_);
    return fault_;
  }
  backend_counters counters() const override;
  void counters_reset() override;

 private:
  // After an exception escaped a step, the KV caches and (for a device error) the context are in an unknown state:
  // the backend refuses further work rather than compute on it. Set from the request thread, read from any.
  void set_fault(const std::string & what) {
    std::lock_guard<std::mutex> hold(fault_mutex_);
    if (fault_.empty()) fault_ = what;
  }
  bool refuse_after_fault(rt_error & error) const {
    const std::string f = fault();
    if (f.empty()) return false;
    fail(error, rt_status::device_fault,
         "CUDA backend: unusable after an earlier device error (" + f + "); restart the runtime to use the device again");
    return true;
  }

  struct seq_state {
    bool used = false;
    int length = 0;
    __half * k = nullptr;
    __half * v = nullptr;
  };
  struct token_ref {
    int entry;
    int index;
  };

  bool run(const std::vector<batch_entry> & batch, bool all_positions,
           std::vector<std::vector<float>> * logits, std::vector<int32_t> * next, rt_error & error);
  void ensure_scratch(int tokens);
  // `screen`: the LM head's argmax through its INT8 screen (greedy steps of at most RT_LM_SCREEN_MAX_TOKENS
  // outputs), which leaves logits_ unwritten.
  void step(int n_tokens, int n_out, bool screen);
  /** The screen of the LM head from its FP16 values (`f16`, [vocab][cols]). */
  void build_lm_screen(const std::vector<uint16_t> & f16, int cols);
  /** y[n][rows] = (or += with `accumulate`) x[n][cols] times the FP16 weight w[rows][cols] transposed; x rows may
   * be picked through `rows_in`; `tail` runs over y after it. */
  void dense(const __half * w, int rows, int cols, const __half * x, int ldx, int n, float * y, int ldy,
             bool accumulate = false, const int * rows_in = nullptr, const rt_cuda_matmul_tail * tail = nullptr) {
    rt_cuda_f16_args a = rt_cuda_f16_dense(w, rows, cols, x, ldx, n, y, ldy);
    a.rows_in = rows_in;
    a.accumulate = accumulate;
    a.mma_min_tokens = f16_mma_min_tokens_;
    a.gemv_blocks_per_sm = f16_gemv_blocks_per_sm_;
    if (tail != nullptr) a.tail = *tail;
    rt_cuda_matmul_f16(a, stream_);
  }
  /** A tail of the step's n tokens with the matmul tails' arrival counter. */
  rt_cuda_matmul_tail make_tail(rt_matmul_tail_kind kind, int n) const {
    rt_cuda_matmul_tail t;
    t.kind = kind;
    t.n_tokens = n;
    t.arrivals = use_tails_ ? matmul_arrivals_ : nullptr;
    return t;
  }
  struct expert_groups {
    const int * offsets = nullptr;     // [n_groups + 1] into sorted
    const int * sorted = nullptr;      // assignment (token * K + k) per entry, grouped
    const int * sorted_tok = nullptr;  // its token
    const int * active = nullptr;      // groups to launch (-1 = none), or null for all n_groups
    int n_launch = 0;
    int n_groups = 0;
    int n_entries = 0;                 // assignments over all groups
    const uint8_t * const * q_gu = nullptr;
    const __half * const * s_gu = nullptr;
    const uint8_t * const * q_d = nullptr;
    const __half * const * s_d = nullptr;
  };
  // `down_tail` runs after the down projection (the MoE reduce, when the groups are the whole layer's).
  void expert_matmuls(const expert_groups & g, int n_tokens, const rt_cuda_matmul_tail * down_tail = nullptr);
  // Runs the step's routed experts (routed and grouped by the router projection's tail; the full path's MoE reduce
  // applies `next_norm` as the down projection's tail); the partial path routes there too, but groups on the host by
  // stage.
  void layer_moe_full(int li, int n_tokens, const __half * next_norm);
  void layer_moe_partial(int li, int n_tokens);
  void stage_matmuls(int li, const expert_lease & lease, const std::vector<int> & which, const std::vector<int> & ids, int n);

  model_config cfg_;
  // The CUDA current device is per host thread, and the runtime calls in from Node's worker threads: every entry
  // point selects it again.
  int device_ = 0;
  int qkv_w_ = 0;
  int group_ = 0;
  int max_ctx_ = 0;
  bool full_ = true;
  bool use_graphs_ = true;
  bool use_tails_ = true;  // the matmul tails in their matmul's launch (else a launch of their own, same results)
  // Kernels of a full-residency step launched as programmatic dependent launches (launch.cuh). Partial residency
  // keeps plain launches: its steps interleave kernels with copies and cross-stream waits.
  bool use_pdl_ = false;
  // backend_options' kernel thresholds and attention split (0: built in)
  int w4a16_mma_min_entries_ = 0, f16_mma_min_tokens_ = 0, attention_blocks_per_sm_ = 0, f16_gemv_blocks_per_sm_ = 0;
  int slots_per_layer_ = 0;
  expert_layout layout_;

  cudaStream_t stream_ = nullptr;
  device_arena arena_;
  __half * embed_ = nullptr;
  __half * lm_head_ = nullptr;
  __half * final_norm_ = nullptr;
  std::vector<layer_dev> layers_;

  uint8_t * experts_dev_ = nullptr;  // full: [L][E] experts; partial: [L][slots] slots
  // Full residency pointer tables, [L][E] each.
  const uint8_t ** tab_qgu_ = nullptr;
  const __half ** tab_sgu_ = nullptr;
  const uint8_t ** tab_qd_ = nullptr;
  const __half ** tab_sd_ = nullptr;

  uint8_t * host_copy_ = nullptr;
  bool host_pinned_ = false;
  std::unique_ptr<cuda_copy_engine> engine_;
  std::unique_ptr<expert_cache> cache_;
  uint64_t full_hits_ = 0;
  mutable std::mutex fault_mutex_;
  std::string fault_;

  std::vector<seq_state> seqs_;
  std::vector<std::pair<__half *, __half *>> kv_pool_;  // KV caches of freed sequences, for the next ones
  __half ** kv_table_ = nullptr;  // device [2][MAX_SEQUENCES]: K pointers then V pointers

  // Scratch, sized for scratch_tokens_.
  int scratch_tokens_ = 0;
  float * x_ = nullptr;
  __half * xn_ = nullptr;
  float * qkv_ = nullptr;
  __half * attn_ = nullptr;
  float * rlogits_ = nullptr;
  int * topk_ids_ = nullptr;
  float * topk_w_ = nullptr;
  int * offsets_ = nullptr;
  int * sorted_ = nullptr;
  int * sorted_tok_ = nullptr;
  int * active_ = nullptr;
  float * gu_ = nullptr;
  __half * h_ = nullptr;
  float * z_ = nullptr;
  float * logits_ = nullptr;
  int * argmax_ = nullptr;
  int * ctrl_ = nullptr;  // [4][tokens]: ids, positions, slots, output rows
  float * attn_ws_ = nullptr;  // split-position attention partials for small (decode) steps
  // Zeroed arrival counters of the launches that end in a tail (last_block_arrived): attention's split merge, one a
  // (token, head), then one for the matmul tails. A launch leaves them at zero; launches of a stream never overlap.
  unsigned * arrivals_ = nullptr;
  unsigned * matmul_arrivals_ = nullptr;
  // The LM head's argmax tail: each block's best of its rows, [RT_MATMUL_TAIL_MAX_TOKENS][vocab].
  int2 * argmax_partials_ = nullptr;
  // The LM head's INT8 screen (lm-screen.cuh): its head and workspace (q null when turned off or when the head holds
  // Inf or NaN); a step adds its tokens.
  rt_cuda_lm_screen_args screen_;
  // Partial residency stage control: offsets, sorted, sorted_tok, then pointer tables.
  int * stage_ctrl_ = nullptr;
  void ** stage_ptrs_ = nullptr;

  // Decode steps (one new token per sequence) replayed as CUDA graphs, one per batch size: a step's launches depend
  // only on its token count, and its inputs (ctrl_) are uploaded before each replay.
  struct decode_graph {
    cudaGraphExec_t exec = nullptr;
    int steps = 0;
  };
  std::vector<decode_graph> graphs_;  // index: 2 x sequences in the step, + 1 for a screened (greedy) step
  // Nodes of the one-sequence graph (what batch-1 decode pays per token in launches); written by the generating
  // thread, read by info() on another.
  std::atomic<int> decode_step_ops_{0};
  void drop_graphs() {
    for (decode_graph & g : graphs_) {
      if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
    }
    graphs_.clear();
  }
};

bool cuda_backend::init(const model_weights & w, const backend_options & o, rt_error & error) {
  cfg_ = w.config;
  const model_config & c = cfg_;
  if (w.kind != weights_kind::int4) {
    return fail(error, rt_status::unsupported, "the CUDA backend runs qpacked-v2 INT4 models; load " + w.dir + " with weights 'int4' (a packed folder)");
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return fail(error, rt_status::unsupported, "the CUDA backend found no CUDA device");
  }
  if (o.device < 0 || o.device >= count) {
    return fail(error, rt_status::invalid_request, "CUDA device " + std::to_string(o.device) + " does not exist (" + std::to_string(count) + " found)");
  }
  group_ = w.group_size;
  if (c.head_dim % 2 != 0 || c.head_dim > RT_ATTENTION_MAX_HEAD_DIM || c.num_key_value_heads <= 0 ||
      c.num_attention_heads % c.num_key_value_heads != 0 || c.num_experts > RT_ROUTER_MAX_EXPERTS ||
      c.num_experts_per_tok > 32 || c.num_experts_per_tok > c.num_experts || group_ <= 0 || group_ % 2 != 0 ||
      c.hidden_size % group_ != 0 || c.intermediate_size % group_ != 0 || c.hidden_size % 2 != 0) {
    return fail(error, rt_status::unsupported, "the CUDA backend does not support the shape of " + w.dir +
            "/config.json (head_dim even and <= 256, heads divisible by kv heads, <= 1024 experts, <= 32 per token, "
            "group size even and dividing hidden and intermediate sizes)");
  }
  if (c.clip_qkv != 0.0f) {
    return fail(error, rt_status::unsupported, "the CUDA backend does not implement clip_qkv (set in " + w.dir + "/config.json)");
  }
  use_graphs_ = o.cuda_graphs && !env_off("HORIZON_CUDA_GRAPHS");
  use_tails_ = o.matmul_tails && !env_off("HORIZON_CUDA_TAILS");
  w4a16_mma_min_entries_ = std::max(0, o.w4a16_mma_min_entries);
  f16_mma_min_tokens_ = std::max(0, o.f16_mma_min_tokens);
  attention_blocks_per_sm_ = std::max(0, o.attention_blocks_per_sm);
  f16_gemv_blocks_per_sm_ = std::max(0, o.f16_gemv_blocks_per_sm);
  try {
    ck(cudaSetDevice(o.device), "select device");
    device_ = o.device;
    ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "create stream");
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, o.device) == cudaSuccess) arena_.use_nvml(bus_id);
    cudaDeviceProp prop{};
    ck(cudaGetDeviceProperties(&prop, o.device), "read device properties");
    if (prop.major < 7 || (prop.major == 7 && prop.minor < 5)) {
      return fail(error, rt_status::unsupported, std::string("the CUDA backend needs compute capability 7.5 or newer; ") + prop.name + " is " +
              std::to_string(prop.major) + "." + std::to_string(prop.minor));
    }
    max_ctx_ = o.max_context > 0 ? o.max_context : c.max_position_embeddings;
    if (max_ctx_ <= 0) max_ctx_ = 4096;
    const size_t attn_smem = rt_cuda_attention_smem(max_ctx_, c.head_dim);
    if (attn_smem > prop.sharedMemPerBlockOptin) {
      return fail(error, rt_status::unsupported, "max_context " + std::to_string(max_ctx_) + " needs " + std::to_string(attn_smem) +
              " bytes of shared memory per attention block; this GPU allows " +
              std::to_string(prop.sharedMemPerBlockOptin));
    }

    const int H = c.hidden_size, I = c.intermediate_size, L = c.num_hidden_layers, E = c.num_experts;
    const int hd = c.head_dim, nh = c.num_attention_heads, nkv = c.num_key_value_heads;
    qkv_w_ = (nh + 2 * nkv) * hd;

    // Non-routed weights as FP16.
    std::vector<uint16_t> tmp;
    auto upload = [&](const tensor_view * t, const char * what) -> __half * {
      if (t == nullptr) throw cuda_failure(rt_status::model_invalid, std::string("CUDA backend: missing tensor ") + what + " in " + w.dir);
      tmp.resize(static_cast<size_t>(t->numel()));
      to_half(*t, tmp.data());
      void * p = arena_.alloc(tmp.size() * 2, what);
      ck(cudaMemcpy(p, tmp.data(), tmp.size() * 2, cudaMemcpyHostToDevice), what);
      return static_cast<__half *>(p);
    };
    // The LM head's screen, wanted (its pick leaves its per-block bests in the argmax tail's partials) and built below
    // under full residency only: with experts copied in, its memory buys more expert slots instead, each miss saved
    // worth far more than the head's bytes it saves.
    const int64_t screen_partials =
        static_cast<int64_t>(RT_LM_SCREEN_MAX_TOKENS) * rt_cuda_lm_screen_pick_blocks(c.vocab_size);
    const bool want_screen = o.lm_head_screen && !env_off("HORIZON_CUDA_LM_SCREEN") && rt_cuda_lm_screen_fits(H, 1) &&
                             screen_partials <= static_cast<int64_t>(RT_MATMUL_TAIL_MAX_TOKENS) * c.vocab_size;
    embed_ = upload(w.embed_tokens, "embed_tokens");
    lm_head_ = (w.lm_head == w.embed_tokens) ? embed_ : upload(w.lm_head, "lm_head");
    // The head's FP16 values as the GEMV reads them (the last upload's; the embedding's when the two are tied), kept
    // for the screen.
    std::vector<uint16_t> head_f16;
    if (want_screen) head_f16.swap(tmp);
    final_norm_ = upload(w.final_norm, "model.norm");
    layers_.resize(static_cast<size_t>(L));
    for (int li = 0; li < L; ++li) {
      const layer_weights & lw = w.layers[static_cast<size_t>(li)];
      layer_dev & d = layers_[static_cast<size_t>(li)];
      d.input_norm = upload(lw.input_layernorm, "input_layernorm");
      d.post_norm = upload(lw.post_attention_layernorm, "post_attention_layernorm");
      d.q_norm = upload(lw.q_norm, "q_norm");
      d.k_norm = upload(lw.k_norm, "k_norm");
      d.wo = upload(lw.o_proj, "o_proj");
      d.router = upload(lw.router, "mlp.gate");
      const size_t qn = static_cast<size_t>(nh) * hd * H, kn = static_cast<size_t>(nkv) * hd * H;
      tmp.resize(qn + 2 * kn);
      to_half(*lw.q_proj, tmp.data());
      to_half(*lw.k_proj, tmp.data() + qn);
      to_half(*lw.v_proj, tmp.data() + qn + kn);
      d.wqkv = static_cast<__half *>(arena_.alloc(tmp.size() * 2, "qkv_proj"));
      ck(cudaMemcpy(d.wqkv, tmp.data(), tmp.size() * 2, cudaMemcpyHostToDevice), "upload qkv_proj");
      if (static_cast<int>(lw.expert_gate.size()) != E || static_cast<int>(lw.expert_down_scales.size()) != E) {
        return fail(error, rt_status::model_invalid, "layer " + std::to_string(li) + " of " + w.dir + " does not hold " + std::to_string(E) + " experts");
      }
    }
    std::vector<uint16_t>().swap(tmp);

    // Residency plan.
    layout_ = make_layout(H, I, group_);
    int slots = E;
    if (o.expert_slots > 0) {
      slots = std::min(o.expert_slots, E);
    } else if (o.expert_budget_bytes > 0) {
      slots = expert_cache_slots_for_budget(o.expert_budget_bytes, layout_.bytes, L, E);
    } else {
      size_t free_b = 0, total_b = 0;
      ck(cudaMemGetInfo(&free_b, &total_b), "read free memory");
      // KV for the sequences a batch will hold (K and V, FP16) plus 1 GiB for scratch and the CUDA context.
      const size_t sequences = static_cast<size_t>(o.max_sequences > 0 ? o.max_sequences : 8);
      const size_t reserve = static_cast<size_t>(2) * max_ctx_ * nkv * hd * 2 * L * sequences + (size_t(1) << 30);
      const int64_t avail = static_cast<int64_t>(free_b) - static_cast<int64_t>(reserve);
      const int64_t screen = want_screen ? static_cast<int64_t>(rt_cuda_lm_screen_bytes(c.vocab_size, H)) : 0;
      slots = expert_cache_slots_for_budget(avail - screen, layout_.bytes, L, E);
      if (slots < E) slots = expert_cache_slots_for_budget(avail, layout_.bytes, L, E);
    }
    full_ = slots >= E;
    if (full_ && want_screen) build_lm_screen(head_f16, H);
    std::vector<uint16_t>().swap(head_f16);
    use_pdl_ = full_ && o.programmatic_launch && !env_off("HORIZON_CUDA_PDL") &&
               rt_cuda_programmatic_launch_works(stream_);
    slots_per_layer_ = full_ ? E : slots;

    if (full_) {
      experts_dev_ = static_cast<uint8_t *>(arena_.alloc(static_cast<size_t>(L) * E * layout_.bytes, "experts"));
      void * staging = nullptr;
      ck(cudaHostAlloc(&staging, layout_.bytes, cudaHostAllocDefault), "pinned upload buffer");
      std::unique_ptr<void, void (*)(void *)> guard(staging, [](void * p) { cudaFreeHost(p); });
      for (int li = 0; li < L; ++li) {
        for (int e = 0; e < E; ++e) {
          pack_expert(w.layers[static_cast<size_t>(li)], e, layout_, static_cast<uint8_t *>(staging));
          ck(cudaMemcpy(experts_dev_ + (static_cast<size_t>(li) * E + e) * layout_.bytes, staging, layout_.bytes,
                        cudaMemcpyHostToDevice),
             "upload expert");
        }
      }
      std::vector<const void *> qgu(static_cast<size_t>(L) * E), sgu(qgu.size()), qd(qgu.size()), sd(qgu.size());
      for (size_t i = 0; i < qgu.size(); ++i) {
        const uint8_t * base = experts_dev_ + i * layout_.bytes;
        qgu[i] = base + layout_.q_gu;
        sgu[i] = base + layout_.s_gu;
        qd[i] = base + layout_.q_d;
        sd[i] = base + layout_.s_d;
      }
      void * tabs = arena_.alloc(qgu.size() * sizeof(void *) * 4, "expert tables");
      const size_t tb = qgu.size() * sizeof(void *);
      ck(cudaMemcpy(tabs, qgu.data(), tb, cudaMemcpyHostToDevice), "expert table");
      ck(cudaMemcpy(static_cast<uint8_t *>(tabs) + tb, sgu.data(), tb, cudaMemcpyHostToDevice), "expert table");
      ck(cudaMemcpy(static_cast<uint8_t *>(tabs) + 2 * tb, qd.data(), tb, cudaMemcpyHostToDevice), "expert table");
      ck(cudaMemcpy(static_cast<uint8_t *>(tabs) + 3 * tb, sd.data(), tb, cudaMemcpyHostToDevice), "expert table");
      tab_qgu_ = static_cast<const uint8_t **>(tabs);
      tab_sgu_ = reinterpret_cast<const __half **>(static_cast<uint8_t *>(tabs) + tb);
      tab_qd_ = reinterpret_cast<const uint8_t **>(static_cast<uint8_t *>(tabs) + 2 * tb);
      tab_sd_ = reinterpret_cast<const __half **>(static_cast<uint8_t *>(tabs) + 3 * tb);
    } else {
      expert_cache_config cc;
      cc.n_layers = L;
      cc.n_experts = E;
      cc.slots_per_layer = slots;
      cc.staging_buffers = 4;
      cc.expert_bytes = layout_.bytes;
      cc.staging_bytes = layout_.bytes;
      const std::string problem = expert_cache_check_config(cc);
      if (!problem.empty()) {
        return fail(error, rt_status::invalid_request, problem + " (the expert budget is too small for " + w.dir + ")");
      }
      // The complete immutable host copy, built before the first request.
      const size_t total = static_cast<size_t>(L) * E * layout_.bytes;
      void * hp = nullptr;
      if (cudaHostAlloc(&hp, total, cudaHostAllocDefault) == cudaSuccess) {
        host_pinned_ = true;
      } else {
        cudaGetLastError();
        hp = std::malloc(total);
        if (hp == nullptr) {
          return fail(error, rt_status::out_of_memory, "cannot allocate the " + std::to_string(total >> 20) + " MiB host copy of the experts");
        }
      }
      host_copy_ = static_cast<uint8_t *>(hp);
      for (int li = 0; li < L; ++li) {
        for (int e = 0; e < E; ++e) {
          pack_expert(w.layers[static_cast<size_t>(li)], e, layout_,
                      host_copy_ + (static_cast<size_t>(li) * E + e) * layout_.bytes);
        }
      }
      experts_dev_ =
          static_cast<uint8_t *>(arena_.alloc(static_cast<size_t>(L) * slots * layout_.bytes, "expert slots"));
      engine_ = std::make_unique<cuda_copy_engine>(host_copy_, host_pinned_, layout_.bytes, E, cc.staging_buffers,
                                                   experts_dev_, slots);
      engine_->init_slot_events(L);
      cache_ = std::make_unique<expert_cache>(cc, *engine_);
      stage_ctrl_ = static_cast<int *>(arena_.alloc(sizeof(int) * (E + 1 + 2 * MAX_STEP_TOKENS * 32), "stage control"));
      stage_ptrs_ = static_cast<void **>(arena_.alloc(sizeof(void *) * 4 * E, "stage tables"));
    }

    attn_ws_ = static_cast<float *>(
        arena_.alloc(sizeof(float) * rt_cuda_attention_workspace_floats(nh, hd, max_ctx_, 0, attention_blocks_per_sm_), "attention workspace"));
    const size_t n_arrivals = static_cast<size_t>(RT_ATTENTION_SPLIT_MAX_TOKENS) * nh + 1;
    arrivals_ = static_cast<unsigned *>(arena_.alloc(sizeof(unsigned) * n_arrivals, "arrival counters"));
    ck(cudaMemset(arrivals_, 0, sizeof(unsigned) * n_arrivals), "clear arrival counters");
    matmul_arrivals_ = arrivals_ + n_arrivals - 1;
    argmax_partials_ = static_cast<int2 *>(
        arena_.alloc(sizeof(int2) * RT_MATMUL_TAIL_MAX_TOKENS * static_cast<size_t>(c.vocab_size), "argmax partials"));
    kv_table_ = static_cast<__half **>(arena_.alloc(sizeof(__half *) * 2 * MAX_SEQUENCES, "kv table"));
    ck(cudaMemset(kv_table_, 0, sizeof(__half *) * 2 * MAX_SEQUENCES), "clear kv table");
    ensure_scratch(64);
    // The uploads and the memset above ran on the legacy stream, which stream_ (non-blocking) does not wait for; a
    // pageable cudaMemcpy may return before its copy lands.
    ck(cudaDeviceSynchronize(), "finish the uploads");
    arena_.sample();
  } catch (const std::exception & e) {
    return fail(error, status_of(e), e.what());
  }
  return true;
}

void cuda_backend::build_lm_screen(const std::vector<uint16_t> & f16, int cols) {
  // From the FP16 values the GEMV reads, not the checkpoint's (a BF16 head's smallest values round on the way).
  const int V = static_cast<int>(f16.size() / static_cast<size_t>(cols));
  const rt_lm_screen_copy copy = rt_lm_screen_build(f16.data(), V, cols);
  if (!copy.ok) return;  // a head holding Inf or NaN takes the full product
  auto * q = static_cast<int8_t *>(arena_.alloc(copy.q.size(), "lm_head INT8 screen"));
  ck(cudaMemcpy(q, copy.q.data(), copy.q.size(), cudaMemcpyHostToDevice), "upload lm_head INT8 screen");
  auto * meta = static_cast<float4 *>(arena_.alloc(sizeof(float4) * copy.meta.size(), "lm_head screen rows"));
  ck(cudaMemcpy(meta, copy.meta.data(), sizeof(float4) * copy.meta.size(), cudaMemcpyHostToDevice),
     "upload lm_head screen rows");
  screen_ = rt_cuda_lm_screen_head(copy, q, meta, lm_head_, V, cols);
  screen_.hi = static_cast<float *>(arena_.alloc(sizeof(float) * RT_LM_SCREEN_MAX_TOKENS * V, "lm_head screen bounds"));
  screen_.floor =
      static_cast<unsigned *>(arena_.alloc(sizeof(unsigned) * RT_LM_SCREEN_MAX_TOKENS, "lm_head screen floor"));
  ck(cudaMemset(screen_.floor, 0, sizeof(unsigned) * RT_LM_SCREEN_MAX_TOKENS), "clear lm_head screen floor");
  screen_.stats =
      static_cast<unsigned long long *>(arena_.alloc(sizeof(unsigned long long) * 2, "lm_head screen counts"));
  ck(cudaMemset(screen_.stats, 0, sizeof(unsigned long long) * 2), "clear lm_head screen counts");
}

void cuda_backend::ensure_scratch(int tokens) {
  if (tokens <= scratch_tokens_) return;
  tokens = std::max(tokens, scratch_tokens_ * 2);
  tokens = std::min(std::max(tokens, 1), MAX_STEP_TOKENS);
  scratch_tokens_ = 0;  // if an allocation below throws, the next step reallocates instead of using freed buffers
  const model_config & c = cfg_;
  const size_t T = static_cast<size_t>(tokens), H = c.hidden_size, K = c.num_experts_per_tok;
  for (void * p : {static_cast<void *>(x_), static_cast<void *>(xn_), static_cast<void *>(qkv_),
                   static_cast<void *>(attn_), static_cast<void *>(rlogits_), static_cast<void *>(topk_ids_),
                   static_cast<void *>(topk_w_), static_cast<void *>(offsets_), static_cast<void *>(sorted_),
                   static_cast<void *>(sorted_tok_), static_cast<void *>(active_), static_cast<void *>(gu_), static_cast<void *>(h_),
                   static_cast<void *>(z_), static_cast<void *>(logits_), static_cast<void *>(argmax_),
                   static_cast<void *>(ctrl_)}) {
    if (p != nullptr) arena_.release(p);
  }
  x_ = static_cast<float *>(arena_.alloc(T * H * 4, "scratch"));
  xn_ = static_cast<__half *>(arena_.alloc(T * H * 2, "scratch"));
  qkv_ = static_cast<float *>(arena_.alloc(T * qkv_w_ * 4, "scratch"));
  attn_ = static_cast<__half *>(arena_.alloc(T * c.num_attention_heads * c.head_dim * 2, "scratch"));
  rlogits_ = static_cast<float *>(arena_.alloc(T * c.num_experts * 4, "scratch"));
  topk_ids_ = static_cast<int *>(arena_.alloc(T * K * 4, "scratch"));
  topk_w_ = static_cast<float *>(arena_.alloc(T * K * 4, "scratch"));
  offsets_ = static_cast<int *>(arena_.alloc((c.num_experts + 1) * 4, "scratch"));
  sorted_ = static_cast<int *>(arena_.alloc(T * K * 4, "scratch"));
  sorted_tok_ = static_cast<int *>(arena_.alloc(T * K * 4, "scratch"));
  active_ = static_cast<int *>(arena_.alloc(c.num_experts * 4, "scratch"));
  gu_ = static_cast<float *>(arena_.alloc(T * K * 2 * c.intermediate_size * 4, "scratch"));
  h_ = static_cast<__half *>(arena_.alloc(T * K * c.intermediate_size * 2, "scratch"));
  z_ = static_cast<float *>(arena_.alloc(T * K * H * 4, "scratch"));
  logits_ = static_cast<float *>(arena_.alloc(T * c.vocab_size * 4, "scratch"));
  argmax_ = static_cast<int *>(arena_.alloc(T * 4, "scratch"));
  ctrl_ = static_cast<int *>(arena_.alloc(T * 4 * 4, "scratch"));
  scratch_tokens_ = tokens;
  drop_graphs();  // they name the freed buffers
}

int cuda_backend::seq_create(rt_error & error) {
  if (refuse_after_fault(error)) return -1;
  cudaSetDevice(device_);
  int id = -1;
  for (size_t i = 0; i < seqs_.size(); ++i) {
    if (!seqs_[i].used) {
      id = static_cast<int>(i);
      break;
    }
  }
  if (id < 0) {
    if (seqs_.size() >= MAX_SEQUENCES) {
      fail(error, rt_status::invalid_request, "the CUDA backend holds at most " + std::to_string(MAX_SEQUENCES) + " sequences");
      return -1;
    }
    id = static_cast<int>(seqs_.size());
    seqs_.emplace_back();
  }
  seq_state & s = seqs_[static_cast<size_t>(id)];
  const size_t elems = static_cast<size_t>(cfg_.num_hidden_layers) * max_ctx_ * cfg_.num_key_value_heads * cfg_.head_dim;
  try {
    if (!kv_pool_.empty()) {
      s.k = kv_pool_.back().first;
      s.v = kv_pool_.back().second;
      kv_pool_.pop_back();
    } else {
      s.k = static_cast<__half *>(arena_.alloc(elems * 2, "KV cache"));
      s.v = static_cast<__half *>(arena_.alloc(elems * 2, "KV cache"));
    }
    // On the compute stream: steps still queued there may read this sequence id's previous entry (pageable sources
    // are staged before the call returns).
    ck(cudaMemcpyAsync(kv_table_ + id, &s.k, sizeof(__half *), cudaMemcpyHostToDevice, stream_), "kv table");
    ck(cudaMemcpyAsync(kv_table_ + MAX_SEQUENCES + id, &s.v, sizeof(__half *), cudaMemcpyHostToDevice, stream_),
       "kv table");
  } catch (const std::exception & e) {
    if (s.k != nullptr) arena_.release(s.k);
    if (s.v != nullptr) arena_.release(s.v);
    s.k = nullptr;
    s.v = nullptr;
    fail(error, status_of(e), std::string(e.what()) + " (KV cache for a new sequence)");
    return -1;
  }
  s.used = true;
  s.length = 0;
  return id;
}

void cuda_backend::seq_free(int seq_id) {
  if (seq_id < 0 || seq_id >= static_cast<int>(seqs_.size()) || !seqs_[seq_id].used) return;
  seq_state & s = seqs_[static_cast<size_t>(seq_id)];
  // Kept for the next sequence (every KV cache has the same size): a continuously batched run frees and creates one
  // per prompt, and cudaFree would wait for the device each time. Work still queued on the stream that reads this
  // cache runs before any later write to it, which is queued on the same stream.
  kv_pool_.push_back({s.k, s.v});
  s = seq_state{};
}

// Gate/up then down projections of the routed assignments, grouped by expert: `g` says where the groups and their
// weights are (all experts of a layer under full residency, one stage's slots under partial residency).
void cuda_backend::expert_matmuls(const expert_groups & g, int n, const rt_cuda_matmul_tail * down_tail) {
  const model_config & c = cfg_;
  rt_cuda_w4a16_args gu;
  gu.x = xn_;
  gu.ldx = c.hidden_size;
  gu.y = gu_;
  gu.ldy = 2 * c.intermediate_size;
  gu.rows_in = g.sorted_tok;
  gu.rows_out = g.sorted;
  gu.offsets = g.offsets;
  gu.qweight = g.q_gu;
  gu.scales = g.s_gu;
  gu.n_groups = g.n_groups;
  gu.active = g.active;
  gu.n_launch = g.n_launch;
  gu.rows = 2 * c.intermediate_size;
  gu.cols = c.hidden_size;
  gu.group_size = group_;
  gu.max_group_entries = n;
  gu.n_entries = g.n_entries;
  // The step's figure, not the stage's: full and partial residency then take the same kernels (the same numbers).
  gu.mean_group_entries = std::max(1, n * c.num_experts_per_tok / c.num_experts);
  gu.mma_min_entries = w4a16_mma_min_entries_;
  // SwiGLU in the gate-up launch's epilogue: h_ gets the activations, gu_ is scratch for a kernel without it.
  gu.y_swiglu = h_;
  gu.ld_swiglu = c.intermediate_size;
  gu.swiglu_rows = n * c.num_experts_per_tok;
  rt_cuda_matmul_w4a16(gu, stream_);
  rt_cuda_w4a16_args dn = gu;
  dn.y_swiglu = nullptr;
  dn.x = h_;
  dn.ldx = c.intermediate_size;
  dn.y = z_;
  dn.ldy = c.hidden_size;
  dn.rows_in = g.sorted;
  dn.qweight = g.q_d;
  dn.scales = g.s_d;
  dn.rows = c.hidden_size;
  dn.cols = c.intermediate_size;
  if (down_tail != nullptr) dn.tail = *down_tail;
  rt_cuda_matmul_w4a16(dn, stream_);
}

void cuda_backend::layer_moe_full(int li, int n, const __half * next_norm) {
  const model_config & c = cfg_;
  const int K = c.num_experts_per_tok, E = c.num_experts, A = n * K;
  expert_groups g;
  g.offsets = offsets_;
  g.sorted = sorted_;
  g.sorted_tok = sorted_tok_;
  g.active = active_;
  g.n_launch = std::min(E, A);  // at most this many experts are routed; the rest of `active` is -1
  g.n_groups = E;
  g.n_entries = A;
  g.q_gu = tab_qgu_ + static_cast<size_t>(li) * E;
  g.s_gu = tab_sgu_ + static_cast<size_t>(li) * E;
  g.q_d = tab_qd_ + static_cast<size_t>(li) * E;
  g.s_d = tab_sd_ + static_cast<size_t>(li) * E;
  // The MoE reduce with the next norm as the down tail.
  rt_cuda_matmul_tail reduce = make_tail(rt_matmul_tail_kind::moe_reduce, n);
  reduce.weights = topk_w_;
  reduce.k = K;
  reduce.x = x_;
  reduce.norm_w = next_norm;
  reduce.eps = c.rms_norm_eps;
  reduce.out16 = xn_;
  expert_matmuls(g, n, &reduce);
  full_hits_ += static_cast<uint64_t>(A);
}

// Expert matmuls of the lease's groups `which` (indices into lease.experts) over the step's assignments `ids`.
void cuda_backend::stage_matmuls(int li, const expert_lease & lease, const std::vector<int> & which,
                                 const std::vector<int> & ids, int n) {
  const int K = cfg_.num_experts_per_tok, A = n * K;
  const int G = static_cast<int>(which.size());
  std::vector<int> ctrl(static_cast<size_t>(G + 1));
  std::vector<int> sorted;
  std::vector<int> sorted_tok;
  for (int g = 0; g < G; ++g) {
    ctrl[static_cast<size_t>(g)] = static_cast<int>(sorted.size());
    const int expert = lease.experts[static_cast<size_t>(which[static_cast<size_t>(g)])];
    for (int a = 0; a < A; ++a) {
      if (ids[static_cast<size_t>(a)] == expert) {
        sorted.push_back(a);
        sorted_tok.push_back(a / K);
      }
    }
  }
  ctrl[static_cast<size_t>(G)] = static_cast<int>(sorted.size());
  const int n_sorted = static_cast<int>(sorted.size());
  ctrl.insert(ctrl.end(), sorted.begin(), sorted.end());
  ctrl.insert(ctrl.end(), sorted_tok.begin(), sorted_tok.end());
  std::vector<const void *> ptrs(static_cast<size_t>(4 * G));
  for (int g = 0; g < G; ++g) {
    const uint8_t * base = engine_->slot_ptr(li, lease.slots[static_cast<size_t>(which[static_cast<size_t>(g)])]);
    ptrs[static_cast<size_t>(g)] = base + layout_.q_gu;
    ptrs[static_cast<size_t>(G + g)] = base + layout_.s_gu;
    ptrs[static_cast<size_t>(2 * G + g)] = base + layout_.q_d;
    ptrs[static_cast<size_t>(3 * G + g)] = base + layout_.s_d;
  }
  // Pageable sources: cudaMemcpyAsync returns once they are staged, so the vectors may go out of scope; a later
  // call's upload into the same buffers runs after these kernels (one stream).
  ck(cudaMemcpyAsync(stage_ctrl_, ctrl.data(), ctrl.size() * 4, cudaMemcpyHostToDevice, stream_), "stage control");
  ck(cudaMemcpyAsync(stage_ptrs_, ptrs.data(), ptrs.size() * sizeof(void *), cudaMemcpyHostToDevice, stream_),
     "stage tables");
  expert_groups g;
  g.offsets = stage_ctrl_;
  g.sorted = stage_ctrl_ + G + 1;
  g.sorted_tok = g.sorted + n_sorted;
  g.n_groups = G;
  g.n_entries = n_sorted;
  g.q_gu = reinterpret_cast<const uint8_t * const *>(stage_ptrs_);
  g.s_gu = reinterpret_cast<const __half * const *>(stage_ptrs_ + G);
  g.q_d = reinterpret_cast<const uint8_t * const *>(stage_ptrs_ + 2 * G);
  g.s_d = reinterpret_cast<const __half * const *>(stage_ptrs_ + 3 * G);
  expert_matmuls(g, n);
}

void cuda_backend::layer_moe_partial(int li, int n) {
  const model_config & c = cfg_;
  const int K = c.num_experts_per_tok, A = n * K;
  // The host needs the routing to know which experts to bring in (a few bytes of ids, not expert data).
  std::vector<int> ids(static_cast<size_t>(A));
  ck(cudaMemcpyAsync(ids.data(), topk_ids_, ids.size() * 4, cudaMemcpyDeviceToHost, stream_), "read routing");
  ck(cudaStreamSynchronize(stream_), "wait for routing");
  std::vector<int> routed;
  std::vector<char> seen(static_cast<size_t>(c.num_experts), 0);
  for (int e : ids) {
    if (e < 0 || e >= c.num_experts) continue;  // only after NaN router logits; the kernels skip it too
    if (!seen[static_cast<size_t>(e)]) {
      seen[static_cast<size_t>(e)] = 1;
      routed.push_back(e);
    }
  }
  const auto stages = cache_->plan_stages(li, routed);
  for (const auto & stage : stages) {
    expert_lease lease;
    std::string err;
    if (!cache_->begin_acquire(li, stage, lease, err)) throw std::runtime_error(err);
    const lease_guard held(*cache_, lease);
    // Experts already resident compute while the misses copy on the copy stream; the misses compute once their
    // copies are observed complete and published (finish_acquire).
    std::vector<int> hit, miss;
    for (size_t i = 0; i < lease.experts.size(); ++i) {
      (cache_->slot_of(li, lease.experts[i]) == lease.slots[i] ? hit : miss).push_back(static_cast<int>(i));
    }
    if (!hit.empty()) stage_matmuls(li, lease, hit, ids, n);
    cache_->finish_acquire(lease);
    if (!miss.empty()) stage_matmuls(li, lease, miss, ids, n);
    for (int s : lease.slots) ck(cudaEventRecord(engine_->slot_event(li, s), stream_), "record slot readers");
  }
}

// One forward step over the tokens described by ctrl_ (ids, positions, slots, output rows); logits for n_out rows.
void cuda_backend::step(int n, int n_out, bool screen) {
  const model_config & c = cfg_;
  const int H = c.hidden_size, hd = c.head_dim, nh = c.num_attention_heads, nkv = c.num_key_value_heads;
  const int * d_ids = ctrl_;
  const int * d_pos = ctrl_ + scratch_tokens_;
  const int * d_slot = ctrl_ + 2 * scratch_tokens_;
  const int * d_out = ctrl_ + 3 * scratch_tokens_;
  // Each layer's input norm is applied by the launch that last updated x_: here the embedding for the first layer,
  // then the previous layer's MoE reduce (which also applies the final norm after the last layer).
  {
    // The step's first kernel follows the upload of its inputs, a copy, not a kernel: a plain launch.
    const rt_cuda::programmatic_scope plain(false);
    rt_cuda_embedding(d_ids, n, embed_, c.vocab_size, H, x_, layers_.front().input_norm, c.rms_norm_eps, xn_, stream_);
  }
  for (int li = 0; li < c.num_hidden_layers; ++li) {
    const layer_dev & d = layers_[static_cast<size_t>(li)];
    float * q = qkv_;
    float * k = qkv_ + nh * hd;
    float * v = k + nkv * hd;
    const size_t layer_offset = static_cast<size_t>(li) * max_ctx_ * nkv * hd;
    rt_cuda_qk_norm_rope_args pro;
    pro.qkv = qkv_;
    pro.ld = qkv_w_;
    pro.n_tokens = n;
    pro.n_heads = nh;
    pro.n_kv_heads = nkv;
    pro.head_dim = hd;
    pro.q_norm = d.q_norm;
    pro.k_norm = d.k_norm;
    pro.eps = c.rms_norm_eps;
    pro.theta = c.rope_theta;
    pro.positions = d_pos;
    pro.tok_slot = d_slot;
    pro.k_seq = kv_table_;
    pro.v_seq = kv_table_ + MAX_SEQUENCES;
    pro.layer_offset = layer_offset;
    rt_cuda_matmul_tail prologue = make_tail(rt_matmul_tail_kind::qk_norm_rope, n);
    prologue.qk = pro;
    dense(d.wqkv, qkv_w_, H, xn_, H, n, qkv_, qkv_w_, false, nullptr, &prologue);
    rt_cuda_attention_args at;
    at.q = q;
    at.k = k;
    at.v = v;
    at.ld = qkv_w_;
    at.k_seq = kv_table_;
    at.v_seq = kv_table_ + MAX_SEQUENCES;
    at.layer_offset = layer_offset;
    at.kv_stored = true;
    at.tok_slot = d_slot;
    at.tok_pos = d_pos;
    at.n_tokens = n;
    at.n_heads = nh;
    at.n_kv_heads = nkv;
    at.head_dim = hd;
    at.max_context = max_ctx_;
    at.out = attn_;
    at.workspace = attn_ws_;
    at.blocks_per_sm = attention_blocks_per_sm_;
    at.arrivals = use_tails_ ? arrivals_ : nullptr;
    rt_cuda_attention(at, stream_);
    rt_cuda_matmul_tail post_norm = make_tail(rt_matmul_tail_kind::rmsnorm, n);
    post_norm.norm_w = d.post_norm;
    post_norm.eps = c.rms_norm_eps;
    post_norm.out16 = xn_;
    dense(d.wo, H, nh * hd, attn_, nh * hd, n, x_, H, /*accumulate=*/true, nullptr, &post_norm);
    // Routing (and under full residency grouping by expert) as the router projection's tail.
    rt_cuda_matmul_tail route = make_tail(rt_matmul_tail_kind::route, n);
    route.k = c.num_experts_per_tok;
    route.norm_topk_prob = c.norm_topk_prob;
    route.ids = topk_ids_;
    route.weights = topk_w_;
    if (full_) {
      route.offsets = offsets_;
      route.sorted = sorted_;
      route.sorted_token = sorted_tok_;
      route.active = active_;
    }
    dense(d.router, c.num_experts, H, xn_, H, n, rlogits_, c.num_experts, false, nullptr, &route);
    // The MoE reduce applies the next layer's input norm (the final norm after the last layer).
    const bool last = li + 1 == c.num_hidden_layers;
    const __half * next_norm = last ? final_norm_ : layers_[static_cast<size_t>(li) + 1].input_norm;
    if (full_) {
      layer_moe_full(li, n, next_norm);
    } else {
      layer_moe_partial(li, n);
      rt_cuda_moe_reduce(z_, topk_w_, n, c.num_experts_per_tok, H, x_, next_norm, c.rms_norm_eps, xn_, stream_);
    }
  }
  if (screen) {
    rt_cuda_lm_screen_args a = screen_;
    a.x = xn_;
    a.ldx = H;
    a.rows_in = d_out;
    a.n = n_out;
    a.partials = argmax_partials_;
    a.arrivals = matmul_arrivals_;
    a.out = argmax_;
    rt_cuda_lm_screen(a, stream_);
    return;
  }
  rt_cuda_matmul_tail pick = make_tail(rt_matmul_tail_kind::argmax, n_out);
  pick.argmax_out = argmax_;
  pick.argmax_partials = argmax_partials_;
  pick.argmax_partials_per_token = c.vocab_size;
  dense(lm_head_, c.vocab_size, H, xn_, H, n_out, logits_, c.vocab_size, false, /*rows_in=*/d_out, &pick);
}

bool cuda_backend::run(const std::vector<batch_entry> & batch, bool all_positions,
                       std::vector<std::vector<float>> * logits, std::vector<int32_t> * next, rt_error & error) {
  if (refuse_after_fault(error)) return false;
  cudaSetDevice(device_);
  const model_config & c = cfg_;
  const auto cached = [this](int id) {
    return id < 0 || id >= static_cast<int>(seqs_.size()) || !seqs_[static_cast<size_t>(id)].used ? -1
                                                                                                   : seqs_[static_cast<size_t>(id)].length;
  };
  if (!check_batch(batch, cached, max_ctx_, c.vocab_size, "CUDA backend", error)) return false;
  try {
    // Flatten in entry order and cut into steps; a later step's tokens see the cache written by earlier steps.
    std::vector<token_ref> all;
    for (size_t e = 0; e < batch.size(); ++e) {
      for (size_t i = 0; i < batch[e].tokens.size(); ++i) all.push_back({static_cast<int>(e), static_cast<int>(i)});
    }
    if (logits != nullptr) {
      logits->assign(batch.size(), {});
      for (size_t e = 0; e < batch.size(); ++e) {
        (*logits)[e].resize((all_positions ? batch[e].tokens.size() - static_cast<size_t>(batch[e].logits_from) : 1) *
                            static_cast<size_t>(c.vocab_size));
      }
    }
    if (next != nullptr) next->assign(batch.size(), 0);
    // A decode step: one new token for each sequence, all in one step (so at most MAX_GRAPH_SEQUENCES of them).
    bool decode_step = full_ && use_graphs_ && !all_positions && batch.size() <= MAX_GRAPH_SEQUENCES;
    for (const batch_entry & b : batch) decode_step = decode_step && b.tokens.size() == 1;
    bool replays_only = true;  // every step a replay of an already instantiated graph
    const rt_cuda::programmatic_scope pdl(use_pdl_);
    for (size_t begin = 0; begin < all.size(); begin += MAX_STEP_TOKENS) {
      const int n = static_cast<int>(std::min<size_t>(MAX_STEP_TOKENS, all.size() - begin));
      ensure_scratch(n);
      const int T = scratch_tokens_;
      std::vector<int> ctrl(static_cast<size_t>(4 * T), 0);
      std::vector<token_ref> outs;
      for (int i = 0; i < n; ++i) {
        const token_ref & r = all[begin + static_cast<size_t>(i)];
        const batch_entry & b = batch[static_cast<size_t>(r.entry)];
        ctrl[static_cast<size_t>(i)] = b.tokens[static_cast<size_t>(r.index)];
        ctrl[static_cast<size_t>(T + i)] = b.start_pos + r.index;
        ctrl[static_cast<size_t>(2 * T + i)] = b.seq_id;
        const bool last = r.index + 1 == static_cast<int>(b.tokens.size());
        if ((all_positions && r.index >= b.logits_from) || last) {
          ctrl[static_cast<size_t>(3 * T) + outs.size()] = i;
          outs.push_back(r);
        }
      }
      const int n_out = static_cast<int>(outs.size());
      const bool screen = screen_.q != nullptr && logits == nullptr && n_out <= RT_LM_SCREEN_MAX_TOKENS;
      ck(cudaMemcpyAsync(ctrl_, ctrl.data(), ctrl.size() * 4, cudaMemcpyHostToDevice, stream_), "upload step");
      if (decode_step) {
        const size_t gi = 2 * static_cast<size_t>(n) + (screen ? 1 : 0);
        if (graphs_.size() <= gi) graphs_.resize(gi + 1);
        decode_graph & g = graphs_[gi];
        // The first step of a size runs plainly (it may be the only one); the second is captured and replayed.
        if (g.exec == nullptr && ++g.steps >= 2) {
          cudaGraph_t graph = nullptr;
          const uint64_t hits_before_capture = full_hits_;
          ck(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "begin capture");
          try {
            step(n, n_out, screen);
          } catch (...) {
            cudaStreamEndCapture(stream_, &graph);
            if (graph != nullptr) cudaGraphDestroy(graph);
            throw;
          }
          ck(cudaStreamEndCapture(stream_, &graph), "end capture");
          if (n == 1) {
            size_t ops = 0;
            if (cudaGraphGetNodes(graph, nullptr, &ops) == cudaSuccess) decode_step_ops_ = static_cast<int>(ops);
          }
          const cudaError_t inst = cudaGraphInstantiate(&g.exec, graph, 0);
          cudaGraphDestroy(graph);
          ck(inst, "instantiate decode graph");
          full_hits_ = hits_before_capture;
          replays_only = false;
        }
        if (g.exec != nullptr) {
          ck(cudaGraphLaunch(g.exec, stream_), "launch decode graph");
          full_hits_ += static_cast<uint64_t>(n) * c.num_experts_per_tok * c.num_hidden_layers;
        } else {
          step(n, n_out, screen);
          replays_only = false;
        }
      } else {
        step(n, n_out, screen);
        replays_only = false;
      }
      if (next != nullptr) {
        std::vector<int> am(static_cast<size_t>(n_out));
        ck(cudaMemcpyAsync(am.data(), argmax_, am.size() * 4, cudaMemcpyDeviceToHost, stream_), "read tokens");
        ck(cudaStreamSynchronize(stream_), "forward step");
        for (int o = 0; o < n_out; ++o) (*next)[static_cast<size_t>(outs[static_cast<size_t>(o)].entry)] = am[static_cast<size_t>(o)];
      }
      if (logits != nullptr) {
        ck(cudaStreamSynchronize(stream_), "forward step");
        for (int o = 0; o < n_out; ++o) {
          const token_ref & r = outs[static_cast<size_t>(o)];
          float * dst = (*logits)[static_cast<size_t>(r.entry)].data() +
                        (all_positions ? static_cast<size_t>(r.index - batch[static_cast<size_t>(r.entry)].logits_from) * c.vocab_size : 0);
          ck(cudaMemcpy(dst, logits_ + static_cast<size_t>(o) * c.vocab_size, sizeof(float) * c.vocab_size,
                        cudaMemcpyDeviceToHost),
             "read logits");
        }
      }
    }
    ck(cudaStreamSynchronize(stream_), "forward");
    for (const batch_entry & b : batch) {
      seqs_[static_cast<size_t>(b.seq_id)].length = b.start_pos + static_cast<int>(b.tokens.size());
    }
    arena_.sample(!replays_only);
  } catch (const std::exception & e) {
    // Whatever escaped a step, the backend refuses further work, so the caller sees a device fault.
    set_fault(e.what());
    return fail(error, rt_status::device_fault, e.what());
  }
  return true;
}

bool cuda_backend::forward(const std::vector<batch_entry> & batch, bool all_positions,
                           std::vector<std::vector<float>> & logits, rt_error & error) {
  return run(batch, all_positions, &logits, nullptr, error);
}

bool cuda_backend::forward_greedy(const std::vector<batch_entry> & batch, std::vector<int32_t> & next,
                                  rt_error & error) {
  return run(batch, false, nullptr, &next, error);
}

backend_counters cuda_backend::counters() const {
  backend_counters out;
  if (cache_) {
    const expert_cache_counters cc = cache_->counters();
    out.expert_hits = cc.hits;
    out.expert_misses = cc.misses;
    out.h2d_bytes = cc.h2d_bytes;
    out.d2h_bytes = cc.d2h_bytes;
    out.expert_evictions = cc.evictions;
  } else {
    out.expert_hits = full_hits_;
  }
  out.peak_memory_bytes = arena_.peak();
  out.peak_memory_scope = arena_.per_process() ? "process" : "device";
  if (screen_.stats != nullptr) {
    // Steps finish (run() synchronises) before counters are read.
    unsigned long long st[2] = {0, 0};
    cudaSetDevice(device_);
    if (cudaMemcpy(st, screen_.stats, sizeof st, cudaMemcpyDeviceToHost) == cudaSuccess) {
      out.lm_head_screened = st[0];
      out.lm_head_exact_rows = st[1];
    } else {
      cudaGetLastError();
    }
  }
  return out;
}

void cuda_backend::counters_reset() {
  // Called from the request's thread, where another device (or none) may be current; sampling memory there would
  // create a context on device 0 and read its memory.
  cudaSetDevice(device_);
  if (cache_) cache_->counters_reset();
  if (screen_.stats != nullptr && cudaMemset(screen_.stats, 0, sizeof(unsigned long long) * 2) != cudaSuccess) {
    cudaGetLastError();
  }
  full_hits_ = 0;
  arena_.reset_peak();
}

}  // namespace

std::unique_ptr<backend> cuda_backend_create(const model_weights & weights, const backend_options & options,
                                             rt_error & error) {
  auto be = std::make_unique<cuda_backend>();
  if (!be->init(weights, options, error)) return nullptr;
  return be;
}

}  // namespace rt
