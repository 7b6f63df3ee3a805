#include "cuda/attention.cuh"

#include <algorithm>

#include "cuda/common.cuh"

namespace {

constexpr int WARPS = RT_ATTENTION_THREADS / 32;
constexpr int MAX_PER_LANE = RT_ATTENTION_MAX_HEAD_DIM / 32;

__global__ void kv_store_kernel(rt_cuda_attention_args a) {
  rt_cuda::follow_prior_grids();
  const int t = blockIdx.x;
  const int kv_dim = a.n_kv_heads * a.head_dim;
  const size_t base = a.layer_offset + static_cast<size_t>(a.tok_pos[t]) * kv_dim;
  __half * kc = a.k_seq[a.tok_slot[t]] + base;
  __half * vc = a.v_seq[a.tok_slot[t]] + base;
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) {
    kc[i] = __float2half_rn(a.k[static_cast<size_t>(t) * a.ld + i]);
    vc[i] = __float2half_rn(a.v[static_cast<size_t>(t) * a.ld + i]);
  }
}

// How a step's positions are split over blocks: `fixed` positions a block, or (fixed 0) each token's positions over
// at most `target` blocks of a multiple of RT_ATTENTION_MIN_SPLIT_LEN. `splits`: the grid's blocks a (token, head)
// and the workspace's pieces a (token, head).
struct split_plan {
  int fixed = 0;
  int target = 1;
  int splits = 1;
  bool prefetch = false;  // a programmatic launch: K and V rows into L2 before the wait
};

__host__ __device__ __forceinline__ int split_len_at(const split_plan & p, int pos) {
  if (p.fixed > 0) return p.fixed;
  const int per = (pos + p.target) / p.target;  // ceil((pos + 1) / target)
  return (per + RT_ATTENTION_MIN_SPLIT_LEN - 1) / RT_ATTENTION_MIN_SPLIT_LEN * RT_ATTENTION_MIN_SPLIT_LEN;
}

// The softmax-weighted merge of a (token, head)'s split partials into its output row.
__device__ __forceinline__ void combine_splits(const rt_cuda_attention_args & a, int t, int h, const split_plan & plan) {
  const int hd = a.head_dim;
  const int split_len = split_len_at(plan, a.tok_pos[t]);
  const int used = (a.tok_pos[t] + split_len) / split_len;
  const float * base = a.workspace + (static_cast<size_t>(t) * a.n_heads + h) * plan.splits * (hd + 2);
  float m = -INFINITY;
  for (int s = 0; s < used; ++s) m = fmaxf(m, __ldcg(base + static_cast<size_t>(s) * (hd + 2)));
  float denom = 0.0f;
  for (int s = 0; s < used; ++s) {
    const float * p = base + static_cast<size_t>(s) * (hd + 2);
    denom += expf(__ldcg(p) - m) * __ldcg(p + 1);
  }
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.0f;
    for (int s = 0; s < used; ++s) {
      const float * p = base + static_cast<size_t>(s) * (hd + 2);
      acc += expf(__ldcg(p) - m) * __ldcg(p + 2 + d);
    }
    a.out[static_cast<size_t>(t) * a.n_heads * hd + h * hd + d] = __float2half_rn(acc / denom);
  }
}

// A pointer from a device table, read through L2 (nvcc's __ldcg takes no pointer types).
template <typename T>
__device__ __forceinline__ T * ldcg_pointer(T * const * table, int i) {
  return reinterpret_cast<T *>(__ldcg(reinterpret_cast<const unsigned long long *>(table) + i));
}

// This block's K and V rows (positions j0 .. n of its token's sequence) into L2 before the wait; reads through L2.
__device__ __forceinline__ void prefetch_kv(const rt_cuda_attention_args & a, const split_plan & plan) {
  const int t = blockIdx.x;
  const int pos = __ldcg(a.tok_pos + t);
  const int split_len = split_len_at(plan, pos);
  const int j0 = static_cast<int>(blockIdx.z) * split_len;
  const int n = min(pos + 1, j0 + split_len);
  if (j0 >= n) return;
  const int kvh = static_cast<int>(blockIdx.y) / (a.n_heads / a.n_kv_heads);
  const int slot = __ldcg(a.tok_slot + t);
  const size_t kv_dim = static_cast<size_t>(a.n_kv_heads) * a.head_dim;
  const size_t offset = a.layer_offset + static_cast<size_t>(kvh) * a.head_dim;
  const char * k = reinterpret_cast<const char *>(ldcg_pointer(a.k_seq, slot) + offset);
  const char * v = reinterpret_cast<const char *>(ldcg_pointer(a.v_seq, slot) + offset);
  const int row_lines = (a.head_dim * static_cast<int>(sizeof(__half)) + 127) / 128;
  const int count = (n - j0) * row_lines;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const size_t row = static_cast<size_t>(j0 + i / row_lines);
    const size_t at = row * kv_dim * sizeof(__half) + 128 * static_cast<size_t>(i % row_lines);
    rt_cuda::prefetch_l2(k + at);
    rt_cuda::prefetch_l2(v + at);
  }
}

// One block per (token, head, split); positions j0 .. j0 + split_len of the token's sequence. With one split the
// block writes the normalised output, otherwise its unnormalised sum, max and denominator for the merge.
__global__ void __launch_bounds__(RT_ATTENTION_THREADS) attention_kernel(rt_cuda_attention_args a, split_plan plan) {
  // Before the wait (launch.cuh): the K and V rows of earlier positions into L2. The positions and sequence slots came
  // with the step's inputs, copied before its first kernel, which launched plainly; rows of earlier steps are
  // settled, and the current position's (which the kernel before may still be writing) is only prefetched.
  if (plan.prefetch) prefetch_kv(a, plan);
  rt_cuda::follow_prior_grids();
  extern __shared__ float sm[];
  const int hd = a.head_dim;
  float * qs = sm;                        // [hd]
  float * part = qs + hd;                 // [WARPS * hd]
  float * scratch = part + WARPS * hd;    // [32]
  float * scores = scratch + 32;          // [split_len], indexed j - j0

  const int t = blockIdx.x;
  const int h = blockIdx.y;
  const int split_len = split_len_at(plan, a.tok_pos[t]);
  const int j0 = static_cast<int>(blockIdx.z) * split_len;
  const int n = min(a.tok_pos[t] + 1, j0 + split_len);
  if (j0 >= n) return;  // whole block: this split starts past the sequence
  const int kvh = h / (a.n_heads / a.n_kv_heads);
  const int kv_dim = a.n_kv_heads * hd;
  const __half * kbase = a.k_seq[a.tok_slot[t]] + a.layer_offset + kvh * hd;
  const __half * vbase = a.v_seq[a.tok_slot[t]] + a.layer_offset + kvh * hd;
  const float scale = rsqrtf(static_cast<float>(hd));
  for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = a.q[static_cast<size_t>(t) * a.ld + h * hd + d] * scale;
  __syncthreads();

  // One position per thread: a full head-dim dot product from the K row.
  float local_max = -INFINITY;
  const bool vec = hd % 8 == 0;
  for (int j = j0 + threadIdx.x; j < n; j += blockDim.x) {
    float s = 0.0f;
    if (vec) {
      const uint4 * krow = reinterpret_cast<const uint4 *>(kbase + static_cast<size_t>(j) * kv_dim);
      // Unrolled so a row's loads are in flight together (one at a time, a decode step waits for each).
#pragma unroll 16
      for (int d8 = 0; d8 < hd / 8; ++d8) {
        const uint4 raw = krow[d8];
        const __half2 * kh = reinterpret_cast<const __half2 *>(&raw);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float2 kv = __half22float2(kh[i]);
          s = fmaf(qs[8 * d8 + 2 * i], kv.x, s);
          s = fmaf(qs[8 * d8 + 2 * i + 1], kv.y, s);
        }
      }
    } else {
      const __half2 * krow = reinterpret_cast<const __half2 *>(kbase + static_cast<size_t>(j) * kv_dim);
      for (int d2 = 0; d2 < hd / 2; ++d2) {
        const float2 kv = __half22float2(krow[d2]);
        s = fmaf(qs[2 * d2], kv.x, s);
        s = fmaf(qs[2 * d2 + 1], kv.y, s);
      }
    }
    scores[j - j0] = s;
    local_max = fmaxf(local_max, s);
  }
  const float m = rt_cuda::block_max(local_max, scratch);
  float local_sum = 0.0f;
  for (int j = j0 + threadIdx.x; j < n; j += blockDim.x) {
    const float p = expf(scores[j - j0] - m);
    scores[j - j0] = p;
    local_sum += p;
  }
  const float total = rt_cuda::block_sum(local_sum, scratch);  // its barriers also publish scores[]

  // P.V: warps split the positions, lanes split head_dim. Where head_dim is 32, 64, 128 or 256 a lane owns
  // head_dim / 32 adjacent dimensions and reads them in one load (4 to 16 bytes of the V row); else dimension
  // lane + 32 i, one 2-byte load each.
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  float acc[MAX_PER_LANE];
#pragma unroll
  for (int i = 0; i < MAX_PER_LANE; ++i) acc[i] = 0.0f;
  const int per_lane = hd / 32;
  const bool contiguous = hd % 32 == 0 && (per_lane == 1 || per_lane == 2 || per_lane == 4 || per_lane == 8);
  if (contiguous && per_lane == 4) {
#pragma unroll 4
    for (int j = j0 + warp; j < n; j += WARPS) {
      const float p = scores[j - j0];
      const uint2 raw = *reinterpret_cast<const uint2 *>(vbase + static_cast<size_t>(j) * kv_dim + 4 * lane);
      const float2 v01 = __half22float2(*reinterpret_cast<const __half2 *>(&raw.x));
      const float2 v23 = __half22float2(*reinterpret_cast<const __half2 *>(&raw.y));
      acc[0] = fmaf(p, v01.x, acc[0]);
      acc[1] = fmaf(p, v01.y, acc[1]);
      acc[2] = fmaf(p, v23.x, acc[2]);
      acc[3] = fmaf(p, v23.y, acc[3]);
    }
  } else if (contiguous) {
#pragma unroll 4
    for (int j = j0 + warp; j < n; j += WARPS) {
      const float p = scores[j - j0];
      const __half2 * vrow = reinterpret_cast<const __half2 *>(vbase + static_cast<size_t>(j) * kv_dim + per_lane * lane);
      if (per_lane == 1) {
        acc[0] = fmaf(p, __half2float(vbase[static_cast<size_t>(j) * kv_dim + lane]), acc[0]);
        continue;
      }
#pragma unroll
      for (int i = 0; i < MAX_PER_LANE / 2; ++i) {
        if (2 * i < per_lane) {
          const float2 v = __half22float2(vrow[i]);
          acc[2 * i] = fmaf(p, v.x, acc[2 * i]);
          acc[2 * i + 1] = fmaf(p, v.y, acc[2 * i + 1]);
        }
      }
    }
  } else {
#pragma unroll 4
    for (int j = j0 + warp; j < n; j += WARPS) {
      const float p = scores[j - j0];
      const __half * vrow = vbase + static_cast<size_t>(j) * kv_dim;
#pragma unroll
      for (int i = 0; i < MAX_PER_LANE; ++i) {
        const int d = lane + 32 * i;
        if (d < hd) acc[i] = fmaf(p, __half2float(vrow[d]), acc[i]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < MAX_PER_LANE; ++i) {
    const int d = contiguous ? per_lane * lane + i : lane + 32 * i;
    if (contiguous ? i < per_lane : d < hd) part[warp * hd + d] = acc[i];
  }
  __syncthreads();
  const float inv = 1.0f / total;
  const size_t piece = (static_cast<size_t>(t) * a.n_heads + h) * plan.splits + blockIdx.z;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s += part[w * hd + d];
    if (gridDim.z == 1) {
      a.out[static_cast<size_t>(t) * a.n_heads * hd + h * hd + d] = __float2half_rn(s * inv);
    } else {
      a.workspace[piece * (hd + 2) + 2 + d] = s;
    }
  }
  if (gridDim.z > 1 && threadIdx.x == 0) {
    a.workspace[piece * (hd + 2)] = m;
    a.workspace[piece * (hd + 2) + 1] = total;
  }
  // The combine as this launch's tail: the (token, head)'s last split block to finish merges all of its splits.
  if (gridDim.z > 1 && a.arrivals != nullptr) {
    const unsigned used = static_cast<unsigned>((a.tok_pos[t] + split_len) / split_len);
    if (rt_cuda::last_block_arrived(a.arrivals + static_cast<size_t>(t) * a.n_heads + h, used)) {
      combine_splits(a, t, h, plan);
    }
  }
}

__global__ void attention_combine_kernel(rt_cuda_attention_args a, split_plan plan) {
  rt_cuda::follow_prior_grids();
  combine_splits(a, blockIdx.x, blockIdx.y, plan);
}

// Blocks a token's positions spread over when split by position: enough for `blocks_per_sm` (0: RT_ATTENTION_BLOCKS_
// PER_SM) blocks an SM over the step's (token, head) pairs, no more than RT_ATTENTION_MIN_SPLIT_LEN-position blocks
// fill the context.
int split_target(int n_tokens, int n_heads, int max_context, int blocks_per_sm) {
  const int pairs = std::max(1, n_tokens * n_heads);
  const int per_sm = blocks_per_sm > 0 ? blocks_per_sm : RT_ATTENTION_BLOCKS_PER_SM;
  const int want = (per_sm * rt_cuda::sm_count() + pairs - 1) / pairs;
  const int most = (max_context + RT_ATTENTION_MIN_SPLIT_LEN - 1) / RT_ATTENTION_MIN_SPLIT_LEN;
  return std::max(1, std::min(want, most));
}

// The plan of a step: split by position for decode-sized steps with a workspace, else one block a (token, head).
split_plan plan_of(const rt_cuda_attention_args & a) {
  split_plan p;
  const bool decode = a.workspace != nullptr && a.n_tokens <= RT_ATTENTION_SPLIT_MAX_TOKENS;
  if (decode && a.split_len > 0 && a.split_len < a.max_context) {
    p.fixed = a.split_len;
    p.splits = (a.max_context + a.split_len - 1) / a.split_len;
  } else if (decode && a.split_len == 0) {
    p.target = split_target(a.n_tokens, a.n_heads, a.max_context, a.blocks_per_sm);
    p.splits = p.target;
  }
  if (p.splits <= 1) {
    p.fixed = a.max_context;
    p.splits = 1;
  }
  return p;
}

}  // namespace

size_t rt_cuda_attention_workspace_floats(int n_heads, int head_dim, int max_context, int split_len,
                                          int blocks_per_sm) {
  // One token's step splits the most.
  const size_t splits = static_cast<size_t>(split_len > 0 ? (max_context + split_len - 1) / split_len
                                                          : split_target(1, n_heads, max_context, blocks_per_sm));
  return static_cast<size_t>(RT_ATTENTION_SPLIT_MAX_TOKENS) * n_heads * splits * (head_dim + 2);
}

size_t rt_cuda_attention_smem(int max_context, int head_dim) {
  return sizeof(float) * (static_cast<size_t>(head_dim) * (1 + WARPS) + 32 + static_cast<size_t>(max_context));
}

int rt_cuda_attention_splits(const rt_cuda_attention_args & a) { return plan_of(a).splits; }

void rt_cuda_attention(const rt_cuda_attention_args & a, cudaStream_t stream) {
  if (a.n_tokens <= 0) return;
  if (!a.kv_stored) {
    rt_cuda::launch("kv_store_kernel", kv_store_kernel, a.n_tokens, 256, 0, stream, a);
    RT_CUDA_LAUNCH_CHECK();
  }
  split_plan plan = plan_of(a);
  plan.prefetch = rt_cuda::programmatic_launch_on() && a.n_tokens <= RT_ATTENTION_SPLIT_MAX_TOKENS;
  // Scores for the longest block: at the last position of the context.
  const size_t smem = rt_cuda_attention_smem(split_len_at(plan, a.max_context - 1), a.head_dim);
  rt_cuda_allow_smem(reinterpret_cast<const void *>(attention_kernel), smem);
  rt_cuda::launch("attention_kernel", attention_kernel, dim3(a.n_tokens, a.n_heads, plan.splits), RT_ATTENTION_THREADS,
                  smem, stream, a, plan);
  RT_CUDA_LAUNCH_CHECK();
  if (plan.splits > 1 && a.arrivals == nullptr) {
    rt_cuda::launch("attention_combine_kernel", attention_combine_kernel, dim3(a.n_tokens, a.n_heads, 1), 128, 0,
                    stream, a, plan);
    RT_CUDA_LAUNCH_CHECK();
  }
}
