#pragma once
// One token's q/k norm, RoPE and K/V store by one block (device code, for the .cu files only): qk-norm-rope.cu's
// kernel runs it, and so does the QKV projection's tail, with the sums of a RT_QK_NORM_ROPE_THREADS-thread block
// whatever their block size.
#include "cuda/common.cuh"
#include "cuda/qk-norm-rope.cuh"
#include "cuda/rmsnorm-block.cuh"

namespace rt_cuda {

__device__ __forceinline__ void qk_norm_rope_token(const rt_cuda_qk_norm_rope_args & a, int t, float * scratch) {
  const int hd = a.head_dim;
  const int half_dim = hd / 2;
  const int qn = a.n_heads * hd;
  const int kn = a.n_kv_heads * hd;
  float * q = a.qkv + static_cast<size_t>(t) * a.ld;
  const float * k = q + qn;
  const float * v = k + kn;

  const float inv_q = rsqrtf(sum_squares_as<RT_QK_NORM_ROPE_THREADS>(q, qn, scratch) / static_cast<float>(qn) + a.eps);
  const float inv_k = rsqrtf(sum_squares_as<RT_QK_NORM_ROPE_THREADS>(k, kn, scratch) / static_cast<float>(kn) + a.eps);

  const int pos = a.positions[t];
  const float fpos = static_cast<float>(pos);
  const size_t cache = a.layer_offset + static_cast<size_t>(pos) * kn;
  __half * kc = a.k_seq[a.tok_slot[t]] + cache;
  __half * vc = a.v_seq[a.tok_slot[t]] + cache;
  // Each thread owns rotation pairs (i, i + half_dim) of one head, so reads and writes never overlap. Four pairs a
  // thread at a time, their loads before any store (a store to q would otherwise hold back the next pair's loads).
  constexpr int CHUNK = 4;
  const int pairs = (a.n_heads + a.n_kv_heads) * half_dim;
  for (int base = threadIdx.x; base < pairs; base += CHUNK * blockDim.x) {
    float x1[CHUNK], x2[CHUNK];
    int off[CHUNK];
#pragma unroll
    for (int u = 0; u < CHUNK; ++u) {
      const int idx = base + u * static_cast<int>(blockDim.x);
      const int h = idx / half_dim;
      const int i = idx - h * half_dim;
      const bool is_q = h < a.n_heads;
      off[u] = (is_q ? h : h - a.n_heads) * hd + i;
      const float * src = is_q ? q : k;
      const __half * w = is_q ? a.q_norm : a.k_norm;
      const float inv = is_q ? inv_q : inv_k;
      x1[u] = 0.0f;
      x2[u] = 0.0f;
      if (idx < pairs) {
        x1[u] = __ldcg(src + off[u]) * inv * __half2float(w[off[u]]);
        x2[u] = __ldcg(src + off[u] + half_dim) * inv * __half2float(w[off[u] + half_dim]);
      }
    }
#pragma unroll
    for (int u = 0; u < CHUNK; ++u) {
      const int idx = base + u * static_cast<int>(blockDim.x);
      if (idx >= pairs) break;
      const int h = idx / half_dim;
      const int i = idx - h * half_dim;
      // Same float32 steps as rt_cuda_rope and transformers: inv_freq = 1 / theta^(2i/d), angle = pos * inv_freq.
      const float inv_freq = 1.0f / powf(a.theta, static_cast<float>(2 * i) / static_cast<float>(hd));
      float sn, cs;
      sincosf(fpos * inv_freq, &sn, &cs);
      const float y1 = x1[u] * cs - x2[u] * sn;
      const float y2 = x2[u] * cs + x1[u] * sn;
      if (h < a.n_heads) {
        q[off[u]] = y1;
        q[off[u] + half_dim] = y2;
      } else {
        kc[off[u]] = __float2half_rn(y1);
        kc[off[u] + half_dim] = __float2half_rn(y2);
      }
    }
  }
  for (int base = threadIdx.x; base < kn; base += CHUNK * blockDim.x) {
    float vv[CHUNK];
#pragma unroll
    for (int u = 0; u < CHUNK; ++u) {
      const int i = base + u * static_cast<int>(blockDim.x);
      vv[u] = i < kn ? __ldcg(v + i) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < CHUNK; ++u) {
      const int i = base + u * static_cast<int>(blockDim.x);
      if (i < kn) vc[i] = __float2half_rn(vv[u]);
    }
  }
}

}  // namespace rt_cuda
