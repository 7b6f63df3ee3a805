#include "cpu/attention-f16.h"

#include <algorithm>
#include <cmath>

#include "cpu/cpu-kernels.h"
#include "cpu/simd-lanes.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define RT_ATT_AVX512 1
#define RT_T_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))
#endif

namespace rt {

namespace {

int64_t kv_offset(const attention_heads & a, int i) { return static_cast<int64_t>((a.h0 + i) / a.rep) * a.head_dim; }

// Head by head on the row kernels (AVX2 or scalar, as cpu_kernels_simd says): the reference loop.
void chunk_rows(const attention_heads & a, int j0, int j1, float * scratch, const attention_partial & p) {
  const int hd = a.head_dim, n = j1 - j0;
  for (int i = 0; i < a.n_heads; ++i) {
    const float * q = a.q + static_cast<int64_t>(i) * hd;
    const uint16_t * keys = a.keys + kv_offset(a, i) + j0 * a.ld;
    const uint16_t * values = a.values + kv_offset(a, i) + j0 * a.ld;
    float * sc = scratch + static_cast<int64_t>(i) * n;
    float * o = p.out + static_cast<int64_t>(i) * hd;
    float mx = -INFINITY;
    for (int j = 0; j < n; ++j) {
      sc[j] = cpu_dot_f16(keys + j * a.ld, q, hd) * a.scale;
      mx = std::max(mx, sc[j]);
    }
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) {
      sc[j] = std::exp(sc[j] - mx);
      sum += sc[j];
    }
    std::fill(o, o + hd, 0.0f);
    for (int j = 0; j < n; ++j) cpu_axpy_f16(sc[j], values + j * a.ld, o, hd);
    p.max[i] = mx;
    p.sum[i] = sum;
  }
}

// Each head's slice of the key row a few positions ahead is fetched by hand, spread over the heads' loop (one burst
// a row overflowed the miss buffers: 10.4 ms against 8.5 for 16 layers x 16 heads x 1,024 positions on one thread).
constexpr int kAhead = 4;
// Values go in blocks of positions: a head's slice of 64 (AVX2) or 128 (AVX-512) lanes stays in registers over the
// block, where a position at a time loads and stores the output once a position. The rows of the next block are
// fetched meanwhile.
constexpr int kBlock = 8;
constexpr int kAheadValues = kBlock;

#ifdef RT_X86_SIMD
RT_AVX2 inline void prefetch_span(const uint16_t * p, int64_t halfs) {
  for (int64_t c = 0; c < halfs; c += 32) _mm_prefetch(reinterpret_cast<const char *>(p + c), _MM_HINT_T0);
}

RT_AVX2 inline __m256 f16x8(const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }

RT_AVX2 inline float hsum8(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// exp(x) for x <= 0 as exp_nonpositive below, with 2^k put into the exponent field: below -87 the result is 0 (e^-87
// is under 2^-125, where 2^k would leave the normal range; beside the largest score's weight of 1 it counts for
// nothing).
RT_AVX2 __m256 exp_nonpositive8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f);
  const __m256 xc = _mm256_max_ps(lo, x);  // NaN stays NaN (max takes the second operand then)
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), xc);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  const __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  return _mm256_blendv_ps(e, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
}

// Lanes 0 .. left - 1 of an 8-lane step (all of them from 8 on), for maskload / maskstore.
RT_AVX2 inline __m256i lanes8(int left) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(left < 8 ? left : 8), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// One head's scores replaced by exp(score - max) in place; their max and sum (NaN scores give NaN weights).
RT_AVX2 void exp_in_place8(float * sc, int n, float * max_out, float * sum_out) {
  __m256 mxv = _mm256_set1_ps(-INFINITY);
  int j = 0;
  for (; j + 8 <= n; j += 8) mxv = _mm256_max_ps(mxv, _mm256_loadu_ps(sc + j));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mxv), _mm256_extractf128_ps(mxv, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  float mx = std::max(_mm_cvtss_f32(m4), _mm_cvtss_f32(_mm_movehdup_ps(m4)));
  for (; j < n; ++j) mx = std::max(mx, sc[j]);
  const __m256 m = _mm256_set1_ps(mx);
  __m256 sumv = _mm256_setzero_ps();
  for (j = 0; j < n; j += 8) {
    const __m256i k = lanes8(n - j);
    const __m256 e = _mm256_and_ps(exp_nonpositive8(_mm256_sub_ps(_mm256_maskload_ps(sc + j, k), m)), _mm256_castsi256_ps(k));
    _mm256_maskstore_ps(sc + j, k, e);
    sumv = _mm256_add_ps(sumv, e);
  }
  *max_out = mx;
  *sum_out = hsum8(sumv);
}

// The AVX-512 loop below on 8 lanes: V vectors a head.
template <int V>
RT_AVX2 void chunk_avx2(const attention_heads & a, int j0, int j1, float * scratch, const attention_partial & p) {
  constexpr int hd = 8 * V;
  const int nh = a.n_heads, n = j1 - j0;
  for (int j = j0; j < j1; ++j) {
    const uint16_t * row = a.keys + j * a.ld;
    for (int i = 0; i < nh; ++i) {
      const uint16_t * kj = row + kv_offset(a, i);
      prefetch_span(kj + kAhead * a.ld, hd);
      const float * q = a.q + i * hd;
      __m256 a0 = _mm256_mul_ps(f16x8(kj), _mm256_loadu_ps(q));
      __m256 a1 = _mm256_mul_ps(f16x8(kj + 8), _mm256_loadu_ps(q + 8));
      RT_UNROLL(16)
      for (int k = 2; k < V; k += 2) {
        a0 = _mm256_fmadd_ps(f16x8(kj + 8 * k), _mm256_loadu_ps(q + 8 * k), a0);
        a1 = _mm256_fmadd_ps(f16x8(kj + 8 * k + 8), _mm256_loadu_ps(q + 8 * k + 8), a1);
      }
      scratch[static_cast<int64_t>(i) * n + (j - j0)] = hsum8(_mm256_add_ps(a0, a1)) * a.scale;
    }
  }
  for (int i = 0; i < nh; ++i) exp_in_place8(scratch + static_cast<int64_t>(i) * n, n, p.max + i, p.sum + i);
  for (int jb = j0; jb < j1; jb += kBlock) {
    const int je = std::min(j1, jb + kBlock);
    for (int i = 0; i < nh; ++i) {
      const uint16_t * vh = a.values + kv_offset(a, i);
      const float * w = scratch + static_cast<int64_t>(i) * n - j0;
      for (int part = 0; part < V; part += 8) {
        float * o = p.out + i * hd + 8 * part;
        __m256 acc[8];
        RT_UNROLL(8)
        for (int k = 0; k < 8; ++k) acc[k] = jb == j0 ? _mm256_setzero_ps() : _mm256_loadu_ps(o + 8 * k);
        for (int j = jb; j < je; ++j) {
          const uint16_t * vj = vh + j * a.ld + 8 * part;
          prefetch_span(vj + kAheadValues * a.ld, 64);
          const __m256 pw = _mm256_set1_ps(w[j]);
          RT_UNROLL(8)
          for (int k = 0; k < 8; ++k) acc[k] = _mm256_fmadd_ps(pw, f16x8(vj + 8 * k), acc[k]);
        }
        RT_UNROLL(8)
        for (int k = 0; k < 8; ++k) _mm256_storeu_ps(o + 8 * k, acc[k]);
      }
    }
  }
}
#endif

#ifdef RT_ATT_AVX512
// exp(x) for x <= 0 (a score minus the largest): x = k ln2 + r with |r| <= ln2/2, e^r by its degree-7 Taylor
// polynomial (truncation below 6e-9 relative), then scaled by 2^k; below -104 the result is 0, as expf's underflow.
RT_T_AVX512 __m512 exp_nonpositive(__m512 x) {
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);  // ln2's high part, exact in the product
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512 e = _mm512_scalef_ps(p, k);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_LT_OQ), e, _mm512_setzero_ps());
}

// Lanes 0 .. left - 1 of a 16-lane step (all of them from 16 on).
inline __mmask16 lanes(int left) { return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u); }

// One head's scores replaced by exp(score - max) in place; their max and sum (NaN scores give NaN weights).
RT_T_AVX512 void exp_in_place(float * sc, int n, float * max_out, float * sum_out) {
  __m512 mxv = _mm512_set1_ps(-INFINITY);
  int j = 0;
  for (; j + 16 <= n; j += 16) mxv = _mm512_max_ps(mxv, _mm512_loadu_ps(sc + j));
  float mx = _mm512_reduce_max_ps(mxv);
  for (; j < n; ++j) mx = std::max(mx, sc[j]);
  const __m512 m = _mm512_set1_ps(mx);
  __m512 sumv = _mm512_setzero_ps();
  for (j = 0; j < n; j += 16) {
    const __mmask16 k = lanes(n - j);
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, sc + j), m));
    _mm512_mask_storeu_ps(sc + j, k, e);
    sumv = _mm512_add_ps(sumv, _mm512_maskz_mov_ps(k, e));
  }
  *max_out = mx;
  *sum_out = _mm512_reduce_add_ps(sumv);
}

RT_T_AVX512 inline __m512 f16x16(const uint16_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p))); }

// V vectors of 16 lanes a head. Two accumulators a score halve its chain of dependent multiply-adds.
template <int V>
RT_T_AVX512 void chunk_avx512(const attention_heads & a, int j0, int j1, float * scratch, const attention_partial & p) {
  constexpr int hd = 16 * V;
  constexpr int P = V < 8 ? V : 8;  // vectors of a head's slice kept in registers over a block of values
  const int nh = a.n_heads, n = j1 - j0;
  for (int j = j0; j < j1; ++j) {
    const uint16_t * row = a.keys + j * a.ld;
    for (int i = 0; i < nh; ++i) {
      const uint16_t * kj = row + kv_offset(a, i);
      prefetch_span(kj + kAhead * a.ld, hd);
      const float * q = a.q + i * hd;
      __m512 a0 = _mm512_mul_ps(f16x16(kj), _mm512_loadu_ps(q));
      __m512 a1 = _mm512_mul_ps(f16x16(kj + 16), _mm512_loadu_ps(q + 16));
      for (int k = 2; k < V; k += 2) {
        a0 = _mm512_fmadd_ps(f16x16(kj + 16 * k), _mm512_loadu_ps(q + 16 * k), a0);
        a1 = _mm512_fmadd_ps(f16x16(kj + 16 * k + 16), _mm512_loadu_ps(q + 16 * k + 16), a1);
      }
      scratch[static_cast<int64_t>(i) * n + (j - j0)] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) * a.scale;
    }
  }
  for (int i = 0; i < nh; ++i) exp_in_place(scratch + static_cast<int64_t>(i) * n, n, p.max + i, p.sum + i);
  for (int jb = j0; jb < j1; jb += kBlock) {
    const int je = std::min(j1, jb + kBlock);
    for (int i = 0; i < nh; ++i) {
      const uint16_t * vh = a.values + kv_offset(a, i);
      const float * w = scratch + static_cast<int64_t>(i) * n - j0;
      for (int part = 0; part < V; part += P) {
        float * o = p.out + i * hd + 16 * part;
        __m512 acc[P];
        for (int k = 0; k < P; ++k) acc[k] = jb == j0 ? _mm512_setzero_ps() : _mm512_loadu_ps(o + 16 * k);
        for (int j = jb; j < je; ++j) {
          const uint16_t * vj = vh + j * a.ld + 16 * part;
          prefetch_span(vj + kAheadValues * a.ld, 16 * P);
          const __m512 pw = _mm512_set1_ps(w[j]);
          for (int k = 0; k < P; ++k) acc[k] = _mm512_fmadd_ps(pw, f16x16(vj + 16 * k), acc[k]);
        }
        for (int k = 0; k < P; ++k) _mm512_storeu_ps(o + 16 * k, acc[k]);
      }
    }
  }
}
#endif

}  // namespace

void cpu_attention_chunk_f16(const attention_heads & a, int j0, int j1, float * scratch, const attention_partial & p) {
  const cpu_float_path path = cpu_float_path_active();
#ifdef RT_ATT_AVX512
  if (path == cpu_float_path::avx512) {
    switch (a.head_dim) {
      case 64: return chunk_avx512<4>(a, j0, j1, scratch, p);
      case 128: return chunk_avx512<8>(a, j0, j1, scratch, p);
      case 256: return chunk_avx512<16>(a, j0, j1, scratch, p);
      default: break;
    }
  }
#endif
#ifdef RT_X86_SIMD
  if (path != cpu_float_path::scalar) {
    switch (a.head_dim) {
      case 64: return chunk_avx2<8>(a, j0, j1, scratch, p);
      case 128: return chunk_avx2<16>(a, j0, j1, scratch, p);
      case 256: return chunk_avx2<32>(a, j0, j1, scratch, p);
      default: break;
    }
  }
#endif
  (void)path;
  chunk_rows(a, j0, j1, scratch, p);
}

void attention_partial_merge(const attention_partial & into, const attention_partial & next, int n_heads, int head_dim) {
  for (int i = 0; i < n_heads; ++i) {
    const float ma = into.max[i], mb = next.max[i];
    const float m = std::isnan(ma) || std::isnan(mb) ? NAN : std::max(ma, mb);
    const float wa = std::exp(ma - m), wb = std::exp(mb - m);
    into.max[i] = m;
    into.sum[i] = wa * into.sum[i] + wb * next.sum[i];
    float * o = into.out + static_cast<int64_t>(i) * head_dim;
    const float * on = next.out + static_cast<int64_t>(i) * head_dim;
    for (int d = 0; d < head_dim; ++d) o[d] = wa * o[d] + wb * on[d];
  }
}

void attention_partial_finish(const attention_partial & p, int n_heads, int head_dim, float * out) {
  for (int i = 0; i < n_heads; ++i) {
    const float inv = 1.0f / p.sum[i];
    const float * o = p.out + static_cast<int64_t>(i) * head_dim;
    float * dst = out + static_cast<int64_t>(i) * head_dim;
    for (int d = 0; d < head_dim; ++d) dst[d] = o[d] * inv;
  }
}

void cpu_attention_heads_f16(const attention_heads & a, int n, float * scratch, float * out) {
  const int nh = a.n_heads, hd = a.head_dim;
  float * sc = scratch;
  float * next_out = sc + static_cast<int64_t>(nh) * RT_CPU_ATTENTION_CHUNK;
  float * m = next_out + static_cast<int64_t>(nh) * hd;
  const attention_partial run{out, m, m + nh}, next{next_out, m + 2 * nh, m + 3 * nh};
  const int chunks = attention_chunks(n);
  cpu_attention_chunk_f16(a, 0, attention_chunk_begin(n, 1), sc, run);
  for (int k = 1; k < chunks; ++k) {
    cpu_attention_chunk_f16(a, attention_chunk_begin(n, k), attention_chunk_begin(n, k + 1), sc, next);
    attention_partial_merge(run, next, nh, hd);
  }
  attention_partial_finish(run, nh, hd, out);
}

void cpu_attention_step(const std::vector<attention_token> & tokens, thread_pool & pool, attention_step_scratch & scratch) {
  if (tokens.empty()) return;
  const int T = static_cast<int>(tokens.size());
  const int nh = tokens[0].heads.n_heads, hd = tokens[0].heads.head_dim;
  const int threads = pool.size();
  if (T >= 2 * threads) {
    pool.parallel_for(T, [&](int64_t b, int64_t e) {
      std::vector<float> sc(static_cast<size_t>(cpu_attention_scratch_floats(nh, hd)));
      for (int64_t t = b; t < e; ++t) {
        const attention_token & tok = tokens[static_cast<size_t>(t)];
        cpu_attention_heads_f16(tok.heads, tok.n, sc.data(), tok.out);
      }
    });
    return;
  }
  auto & slot_token = scratch.slot_token;
  auto & slot_chunk = scratch.slot_chunk;
  slot_token.clear();
  slot_chunk.clear();
  for (int t = 0; t < T; ++t) {
    const int chunks = attention_chunks(tokens[static_cast<size_t>(t)].n);
    for (int k = 0; k < chunks; ++k) {
      slot_token.push_back(t);
      slot_chunk.push_back(k);
    }
  }
  const int slots = static_cast<int>(slot_token.size());
  const int runs_wanted = slots >= 2 * threads ? 1 : std::min(nh, (2 * threads + slots - 1) / slots);
  const int head_run = (nh + runs_wanted - 1) / runs_wanted;
  const int runs = (nh + head_run - 1) / head_run;
  const int64_t per_slot = static_cast<int64_t>(nh) * (hd + 2);
  scratch.partials.resize(static_cast<size_t>(slots * per_slot));
  float * partials = scratch.partials.data();
  const auto partial = [&](int slot, int h0) {
    float * base = partials + slot * per_slot;
    return attention_partial{base + static_cast<int64_t>(h0) * hd, base + static_cast<int64_t>(nh) * hd + h0,
                             base + static_cast<int64_t>(nh) * (hd + 1) + h0};
  };
  pool.parallel_for(static_cast<int64_t>(slots) * runs, [&](int64_t b, int64_t e) {
    std::vector<float> sc(static_cast<size_t>(head_run) * RT_CPU_ATTENTION_CHUNK);
    for (int64_t idx = b; idx < e; ++idx) {
      const int slot = static_cast<int>(idx / runs), h0 = static_cast<int>(idx % runs) * head_run;
      const attention_token & tok = tokens[static_cast<size_t>(slot_token[static_cast<size_t>(slot)])];
      const int k = slot_chunk[static_cast<size_t>(slot)];
      attention_heads run = tok.heads;
      run.q += static_cast<int64_t>(h0) * hd;
      run.h0 = h0;
      run.n_heads = std::min(head_run, nh - h0);
      cpu_attention_chunk_f16(run, attention_chunk_begin(tok.n, k), attention_chunk_begin(tok.n, k + 1), sc.data(), partial(slot, h0));
    }
  });
  for (int slot = 0; slot < slots;) {
    const attention_token & tok = tokens[static_cast<size_t>(slot_token[static_cast<size_t>(slot)])];
    const int chunks = attention_chunks(tok.n);
    for (int k = 1; k < chunks; ++k) attention_partial_merge(partial(slot, 0), partial(slot + k, 0), nh, hd);
    attention_partial_finish(partial(slot, 0), nh, hd, tok.out);
    slot += chunks;
  }
}

}  // namespace rt
