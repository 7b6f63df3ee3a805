// CPU kernel figures against what this core can do (not a test; `npm run bench -- --only cpu-kernels`): the rate of
// independent FP32 FMAs (8- and 16-wide) and of 8-bit dot products, beside the INT4 x 8-bit row kernel on every
// path the CPU has (and on the best one with its rows streamed from memory), on one thread, the dense FP16 panels on
// one thread and the bench's, and BF16 expert rows one at a time against the float tiles, in multiply-adds a second;
// then the LM head's full product against its screen, decode attention, and the INT4 packer's scale search. A
// kernel's share of its ceiling says how much a better kernel could win on this machine; #18's notes cite these.
// Last, the memory read rate with the bench's threads and the decode rate it allows (decode is bound by it, not by
// the kernels), and a decode step's attention against it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/model-weights.h"
#include "core/thread-pool.h"
#include "cpu/attention-f16.h"
#include "cpu/cpu-kernels.h"
#include "cpu/dense-panels.h"
#include "cpu/lm-head-screen.h"
#include "cpu/q4-q8-dot.h"
#include "cpu/ref-ops.h"
#include "quant/qpacked-search.h"
#include "test-helpers.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define RT_BENCH_X86 1
#endif

using namespace rt;
using clk = std::chrono::steady_clock;

namespace {

// Best of `reps` timings of fn, in seconds.
template <typename Fn>
double best_of(int reps, Fn fn) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clk::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(clk::now() - t0).count());
  }
  return best;
}

#ifdef RT_BENCH_X86
// Twelve independent chains: enough to cover the FMA latency on every current core.
__attribute__((target("avx2,fma"))) float fma8(long n) {
  __m256 a[12];
  const __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(static_cast<float>(i));
  for (long k = 0; k < n; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
  float o[8];
  _mm256_storeu_ps(o, s);
  return o[0];
}

__attribute__((target("avx512f"))) float fma16(long n) {
  __m512 a[12];
  const __m512 m = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(static_cast<float>(i));
  for (long k = 0; k < n; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], m, c);
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

// 32 unsigned x signed byte products summed into 8 lanes per instruction.
__attribute__((target("avx2,avx512f,avx512vl,avx512vnni"))) int dpbusd8(long n) {
  __m256i a[12];
  const __m256i u = _mm256_set1_epi8(3), s = _mm256_set1_epi8(-2);
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_epi32(i);
  for (long k = 0; k < n; ++k)
    for (int i = 0; i < 12; ++i) a[i] = _mm256_dpbusd_epi32(a[i], u, s);
  __m256i t = a[0];
  for (int i = 1; i < 12; ++i) t = _mm256_add_epi32(t, a[i]);
  return _mm256_extract_epi32(t, 0);
}
#endif

}  // namespace

int main() {
  std::printf("one thread; multiply-adds a second (G = 1e9)\n");
  volatile float sink = 0;
#ifdef RT_BENCH_X86
  const long n = 20000000;
  const double f8 = best_of(3, [&] { sink = sink + fma8(n); });
  std::printf("  ceiling  FP32 FMA, 8-wide:           %6.1f G\n", n * 12.0 * 8 / f8 / 1e9);
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool vnni = avx512 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
  if (avx512) {
    const double f16 = best_of(3, [&] { sink = sink + fma16(n); });
    std::printf("  ceiling  FP32 FMA, 16-wide:          %6.1f G\n", n * 12.0 * 16 / f16 / 1e9);
  }
  if (vnni) {
    volatile int isink = 0;
    const double d = best_of(3, [&] { isink = isink + dpbusd8(n); });
    std::printf("  ceiling  8-bit dot (dpbusd, 256):    %6.1f G\n", n * 12.0 * 32 / d / 1e9);
  }
#endif

  // The INT4 x 8-bit row kernel: an expert's gate/up rows (2048 columns) against 1 token (decode), 2 and 3 (what an
  // expert gets in a batched decode step) and 8 (prefill), on every path.
  const int cols = 2048, rows = 512, nb = cols / kQ8Block;
  std::mt19937 g(7);
  // Thousandths in [-1, 1] (over `denom` instead of 1,000 where given): the bench's activations, keys and values.
  const auto uniform = [&g](float denom = 1000.0f) { return static_cast<float>(static_cast<int>(g() % 2001) - 1000) / denom; };
  std::vector<uint8_t> q(static_cast<size_t>(rows) * cols / 2);
  for (auto & b : q) b = static_cast<uint8_t>(g());
  std::vector<uint16_t> s(static_cast<size_t>(rows) * nb, 0x2C00);
  const int max_t = 8;
  std::vector<float> x(static_cast<size_t>(max_t) * cols);
  for (auto & v : x) v = uniform();
  std::vector<int8_t> xq(x.size());
  std::vector<float> xd(x.size() / kQ8Block), xs(xd.size());
  for (int t = 0; t < max_t; ++t) cpu_quantize_q8(x.data() + t * cols, cols, xq.data() + t * cols, xd.data() + t * nb, xs.data() + t * nb);
  const q8_rows xa8{xq.data(), xd.data(), xs.data(), cols};
  std::vector<float> y(static_cast<size_t>(rows) * max_t);
  for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni}) {
    if (!cpu_isa_force(isa)) continue;
    for (int nt : {1, 2, 3, 8}) {
      const int reps = isa == cpu_isa::scalar ? 2 : 20;
      const double t = best_of(5, [&] {
        for (int k = 0; k < reps; ++k) cpu_rows_dot_q4q8(q.data(), s.data(), cols, rows, xa8, nt, y.data(), rows);
      });
      std::printf("  kernel   INT4 x 8-bit, %-11s %d tok: %6.1f G\n", cpu_isa_name(isa), nt,
                  static_cast<double>(rows) * cols * nt * reps / t / 1e9);
    }
  }
  cpu_isa_reset();
  // The same on the best path with the rows streamed from memory (128 MB, far past the caches), an expert's rows a
  // call, as a decode step reads them: where a kernel also waits for its bytes.
  {
    const int64_t big_rows = 128 * 1024, chunk = 1024;
    std::vector<uint8_t> bq(static_cast<size_t>(big_rows) * cols / 2);
    for (size_t i = 0; i < bq.size(); ++i) bq[i] = q[i % q.size()];
    std::vector<uint16_t> bs(static_cast<size_t>(big_rows) * nb, 0x2C00);
    std::vector<float> by(static_cast<size_t>(big_rows) * max_t);
    for (int nt : {1, 2, 3, 8}) {
      const double t = best_of(3, [&] {
        for (int64_t r = 0; r < big_rows; r += chunk)
          cpu_rows_dot_q4q8(bq.data() + r * cols / 2, bs.data() + r * nb, cols, chunk, xa8, nt, by.data() + r, big_rows);
      });
      std::printf("  kernel   INT4 x 8-bit, %-11s %d tok, rows from memory: %6.1f G (%.1f GB/s of weights)\n",
                  cpu_isa_name(cpu_isa_active()), nt, static_cast<double>(big_rows) * cols * nt / t / 1e9,
                  static_cast<double>(big_rows) * (cols / 2 + nb * 2) / t / 1e9);
    }
  }

  // The dense FP16 matmuls (the backend's panels): a 2048 x 2048 projection (rows in L3) and the 6144 x 2048 of q, k
  // and v (from memory), at the tokens of decode, a batched decode step and prefill, on one thread and on the bench's.
  const char * env_threads = std::getenv("HORIZON_BENCH_THREADS");
  const int threads = env_threads ? std::max(1, std::atoi(env_threads)) : 2;
  {
    const int in = 2048;
    for (int out : {2048, 6144}) {
      std::vector<uint16_t> w(static_cast<size_t>(out) * in);
      for (auto & v : w) v = static_cast<uint16_t>(0x2400 | (g() & 0x83FF));
      const tensor_view tv = test_util::matrix_view(dtype::f16, out, in, w.data(), 2);
      for (int th : {1, threads}) {
        thread_pool pool(th);
        dense_panels panels;
        dense_panels_build(tv, pool, panels);
        for (int tokens : {1, 16, 128}) {
          std::vector<float> xa(static_cast<size_t>(tokens) * in), ya(static_cast<size_t>(tokens) * out);
          for (auto & v : xa) v = uniform();
          const double tp = best_of(3, [&] { dense_panels_matmul(panels, xa.data(), in, tokens, ya.data(), out, pool); });
          const double macs = static_cast<double>(out) * in * tokens;
          std::printf("  kernel   FP16 panels %dx%d, %3d tok, %d thread(s): %6.1f G\n", out, in, tokens, th, macs / tp / 1e9);
        }
        if (th == threads) break;
      }
    }
  }

  // A BF16 expert's gate rows (OLMoE's 1,024 x 2,048) at the tokens of a BF16 decode step and of the quality check's
  // teacher-forced passes (a few dozen an expert). One row at a time (four tokens per pass over the row, every token's
  // activations read again for each row) against tiles of three rows by two tokens; the same bits.
  {
    const int out = 1024, in = 2048;
    std::vector<uint16_t> w(static_cast<size_t>(out) * in);
    for (auto & v : w) v = static_cast<uint16_t>(0x3c00 | (g() & 0x807F));
    const tensor_view tv = test_util::matrix_view(dtype::bf16, out, in, w.data(), 2);
    for (int tokens : {1, 2, 3, 4, 8, 37}) {
      std::vector<float> xa(static_cast<size_t>(tokens) * in), ya(static_cast<size_t>(tokens) * out);
      for (auto & v : xa) v = uniform();
      const double tr = best_of(3, [&] {
        for (int r = 0; r < out; ++r) cpu_row_dot_n(tv, r, xa.data(), in, tokens, ya.data() + r, out);
      });
      const double tt = best_of(3, [&] { cpu_rows_dot_n(tv, 0, out, xa.data(), in, tokens, ya.data(), out); });
      const double macs = static_cast<double>(out) * in * tokens;
      std::printf("  kernel   BF16 expert rows %dx%d, %2d tok, 1 thread: a row at a time %6.1f G, tiles %6.1f G (%.2fx)\n", out, in,
                  tokens, macs / tr / 1e9, macs / tt / 1e9, tr / tt);
    }
  }

  // Greedy decode's LM head (OLMoE's 50,304 x 2,048 FP16), one token, with the bench's threads: the full product and
  // its argmax against the INT8 screen (cpu/lm-head-screen.h), which reads half the bytes and a few FP16 rows.
  {
    const int V = 50304, H = 2048;
    std::vector<uint16_t> head(static_cast<size_t>(V) * H);
    for (auto & v : head) v = static_cast<uint16_t>(0x2000 | (g() & 0x83FF));
    const tensor_view hv = test_util::matrix_view(dtype::f16, V, H, head.data(), 2);
    const int max_n = 64;
    std::vector<float> xh(static_cast<size_t>(max_n) * H), logits(static_cast<size_t>(max_n) * V);
    for (auto & v : xh) v = uniform();
    thread_pool lm_pool(threads);
    dense_panels head_panels;
    dense_panels_build(hv, lm_pool, head_panels);
    lm_head_screen screen;
    const auto tb = clk::now();
    lm_head_screen_build(head_panels, lm_pool, screen);
    const double build_s = std::chrono::duration<double>(clk::now() - tb).count();
    // One greedy step's head at 1 to 64 outputs: where the screen stops paying (the CPU backend screens steps of at
    // most RT_CPU_LM_SCREEN_MAX_TOKENS, chosen from these figures).
    for (int n : {1, 2, 4, 8, 16, 32, 64}) {
      std::vector<int32_t> full_tok(static_cast<size_t>(n)), screened_tok(static_cast<size_t>(n));
      const double tf = best_of(5, [&] {
        dense_panels_matmul(head_panels, xh.data(), H, n, logits.data(), V, lm_pool);
        for (int t = 0; t < n; ++t) full_tok[static_cast<size_t>(t)] = ref::argmax(logits.data() + static_cast<size_t>(t) * V, V);
      });
      lm_head_screen_stats st;
      const double ts = best_of(5, [&] { lm_head_screen_argmax(screen, hv, head_panels, xh.data(), H, n, lm_pool, screened_tok.data(), st); });
      std::printf("  LM head  50304x2048 FP16, %d token(s), %d thread(s): full product + argmax %.2f ms (%.1f GB/s), INT8 "
                  "screen %.2f ms (%.2fx; %.1f FP16 rows a token)%s\n",
                  n, threads, tf * 1e3, static_cast<double>(V) * H * 2 / tf / 1e9, ts * 1e3, tf / ts,
                  static_cast<double>(st.exact_rows) / std::max<uint64_t>(1, st.tokens),
                  full_tok == screened_tok ? "" : "  MISMATCH");
    }
    std::printf("  LM head  INT8 screen built in %.2f s\n", build_s);
  }

  // One layer's decode attention of OLMoE (16 heads of 128 over the FP16 KV cache), one thread: the kernel on the
  // active path against the head-by-head walk of the row kernels (dot, exp, axpy), which the scalar ISA and head sizes
  // without a vector loop take; KV bytes read a second.
  {
    const int heads = 16, hd = 128;
    const int64_t ld = static_cast<int64_t>(heads) * hd;
    for (int n : {128, 1024, 2048}) {
      std::vector<uint16_t> keys(static_cast<size_t>(n * ld)), values(keys.size());
      for (auto & v : keys) v = ref::float_to_half(uniform());
      for (auto & v : values) v = ref::float_to_half(uniform());
      std::vector<float> q(static_cast<size_t>(heads) * hd), out(q.size()), scratch(static_cast<size_t>(heads) * n),
          att_scratch(static_cast<size_t>(cpu_attention_scratch_floats(heads, hd)));
      for (auto & v : q) v = uniform(500.0f);
      const float scale = 0.08838834764f;
      const double tk = best_of(20, [&] {
        cpu_attention_heads_f16({q.data(), keys.data(), values.data(), ld, 0, heads, 1, hd, scale}, n, att_scratch.data(), out.data());
      });
      const double tr = best_of(20, [&] {
        for (int h = 0; h < heads; ++h) {
          float * sc = scratch.data() + static_cast<size_t>(h) * n;
          float mx = -1e30f, sum = 0.0f;
          for (int j = 0; j < n; ++j) mx = std::max(mx, sc[j] = cpu_dot_f16(keys.data() + j * ld + h * hd, q.data() + h * hd, hd) * scale);
          for (int j = 0; j < n; ++j) sum += sc[j] = std::exp(sc[j] - mx);
          float * o = out.data() + static_cast<size_t>(h) * hd;
          std::fill(o, o + hd, 0.0f);
          for (int j = 0; j < n; ++j) cpu_axpy_f16(sc[j] / sum, values.data() + j * ld + h * hd, o, hd);
        }
      });
      const double bytes = 2.0 * static_cast<double>(n) * static_cast<double>(ld) * 2.0;
      std::printf("  attention 16x128 heads, %4d positions, 1 thread: %s loop %.3f ms (%.1f GB/s), row kernels %.3f ms (%.2fx)\n", n,
                  cpu_float_path_name(cpu_float_path_active()), tk * 1e3, bytes / tk / 1e9, tr * 1e3, tr / tk);
    }
  }

  // The INT4 packer's scale search (what `horizon pack` spends its time on), one thread: groups of 32 Student-t
  // values, the scalar search against the AVX2 one, and the source rate that gives (BF16, 2 bytes a weight).
  {
    std::student_t_distribution<float> t4(4.0f);
    const int groups = 4096, group = 32;
    std::vector<float> w(static_cast<size_t>(groups) * group);
    for (auto & v : w) v = t4(g) * 0.02f;
    std::vector<uint8_t> u(static_cast<size_t>(group));
    uint16_t h = 0;
    const double ts = best_of(3, [&] {
      for (int i = 0; i < groups; ++i) qpacked_search_group_scalar(w.data() + static_cast<size_t>(i) * group, group, u.data(), &h);
    });
    sink += static_cast<float>(h & 1);
    if (cpu_kernels_simd()) {
      const double tv = best_of(3, [&] {
        for (int i = 0; i < groups; ++i) qpacked_search_group_avx2(w.data() + static_cast<size_t>(i) * group, group, u.data(), &h);
      });
      sink += static_cast<float>(h & 1);
      std::printf("  pack     scale search, groups of 32, 1 thread: scalar %.2f us a group, avx2 %.2f (%.2fx; %.0f MB/s of BF16)\n",
                  ts / groups * 1e6, tv / groups * 1e6, ts / tv, groups * group * 2.0 / tv / 1e6);
    } else {
      std::printf("  pack     scale search, groups of 32, 1 thread: scalar %.2f us a group (%.0f MB/s of BF16; no AVX2 here)\n",
                  ts / groups * 1e6, groups * group * 2.0 / ts / 1e6);
    }
  }

  // Decode reads every active weight once a token, so memory bounds it: read bandwidth with the bench's thread
  // count (HORIZON_BENCH_THREADS, default 2) over 1 GiB, and the decode rate that allows at OLMoE-1B-7B's bytes a token
  // (FP16 attention, router and LM head, 8 experts of 4.5-bit weights a layer; the KV cache comes on top).
  const size_t words = (size_t{1} << 30) / sizeof(uint64_t);
  std::vector<uint64_t> big(words);
  for (size_t i = 0; i < words; i += 512) big[i] = i;
  thread_pool readers(threads);
  std::vector<uint64_t> part(static_cast<size_t>(threads) * 8);
  const double tr = best_of(3, [&] {
    readers.parallel_for(threads, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        uint64_t acc = 0;
        const size_t lo = words / threads * t, hi = t + 1 == threads ? words : lo + words / threads;
        for (size_t i = lo; i < hi; ++i) acc += big[i];
        part[static_cast<size_t>(t) * 8] = acc;
      }
    });
  });
  for (int t = 0; t < threads; ++t) sink += static_cast<float>(part[static_cast<size_t>(t) * 8] & 1);
  const double gbs = static_cast<double>(words * sizeof(uint64_t)) / tr / 1e9;
  const double layers = 16, hidden = 2048, inter = 1024, vocab = 50304, top_k = 8, experts = 64;
  const double bytes = layers * (4 * hidden * hidden * 2 + experts * hidden * 2 + top_k * 3 * hidden * inter * 4.5 / 8) + vocab * hidden * 2;
  std::printf("  ceiling  memory read, %d thread(s):    %6.1f GB/s\n", threads, gbs);
  std::printf("  ceiling  decode at that rate:           %6.1f tok/s (%.2f GB a token: OLMoE-1B-7B, FP16 rest, 4.5-bit experts)\n",
              gbs * 1e9 / bytes, bytes / 1e9);

  // A batch-1 decode step's attention as the CPU backend runs it (cpu_attention_step on the bench's threads), over
  // 16 layers' caches: at 1,024 positions their 128 MB come from memory, so the read rate above is its ceiling.
  {
    const int heads = 16, hd = 128, layers_kv = 16;
    const int64_t ld = static_cast<int64_t>(heads) * hd;
    thread_pool att_pool(threads);
    attention_step_scratch step_scratch;
    for (int n : {128, 1024}) {
      std::vector<std::vector<uint16_t>> keys(layers_kv), values(layers_kv);
      for (int l = 0; l < layers_kv; ++l) {
        keys[static_cast<size_t>(l)].resize(static_cast<size_t>(n * ld));
        values[static_cast<size_t>(l)].resize(static_cast<size_t>(n * ld));
        for (auto & v : keys[static_cast<size_t>(l)]) v = ref::float_to_half(uniform());
        for (auto & v : values[static_cast<size_t>(l)]) v = ref::float_to_half(uniform());
      }
      std::vector<float> q(static_cast<size_t>(heads) * hd), out(q.size());
      for (auto & v : q) v = uniform(500.0f);
      const double t = best_of(10, [&] {
        for (int l = 0; l < layers_kv; ++l) {
          const std::vector<attention_token> tokens = {
              {{q.data(), keys[static_cast<size_t>(l)].data(), values[static_cast<size_t>(l)].data(), ld, 0, heads, 1, hd, 0.0884f}, n, out.data()}};
          cpu_attention_step(tokens, att_pool, step_scratch);
        }
      });
      const double kv = 2.0 * layers_kv * static_cast<double>(n) * static_cast<double>(ld) * 2.0;
      std::printf("  attention decode step, 16 layers x 16x128 heads, %4d positions, %d thread(s): %.3f ms (%.1f GB/s, %.0f%% of the read rate)\n",
                  n, threads, t * 1e3, kv / t / 1e9, 100.0 * kv / t / 1e9 / gbs);
    }
  }
  return sink == 12345.0f ? 1 : 0;
}
