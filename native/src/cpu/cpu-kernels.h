#pragma once
// CPU kernels: row dot products over BF16/F16/F32 weights and qpacked-v2 INT4 rows (dequantised in the kernel),
// with an AVX2/FMA/F16C path chosen at run time and a scalar path that is the reference.
#include <cstdint>

#include "core/model-weights.h"
#include "core/thread-pool.h"

namespace rt {

/** True when the AVX2 path is in use (CPU supports AVX2+FMA+F16C and it was not disabled). */
bool cpu_kernels_simd();
/** True when the AVX-512 paths are in use too (AVX-512 F/BW/VL on this CPU, and the SIMD path not switched off). */
bool cpu_kernels_avx512();
/** Forces the scalar path (tests compare both paths). */
void cpu_kernels_set_simd(bool enabled);
/** Whether INT4 experts (group 32) take 8-bit activations (default) or FP32 ones (the numerics reference). */
bool cpu_kernels_q8_activations();
void cpu_kernels_set_q8_activations(bool enabled);

float cpu_dot_f32(const float * w, const float * x, int n);
float cpu_dot_bf16(const uint16_t * w, const float * x, int n);
float cpu_dot_f16(const uint16_t * w, const float * x, int n);
/** Dot of one qpacked row (n/2 bytes, n/group FP16 scales) with x. */
float cpu_dot_q4(const uint8_t * q, const uint16_t * scales, int n, int group, const float * x);

/** W[r] . x for row r of a float tensor [out, in] (BF16/F16/F32). */
float cpu_row_dot(const tensor_view & w, int64_t r, const float * x);
/** The same for row r of a qpacked matrix (q [out, in/2] U8, scales [out, in/group] F16). */
float cpu_row_dot_q4(const tensor_view & q, const tensor_view & scales, int group, int64_t r, const float * x);

/**
 * y[t * ldy] = W[r] . x[t * ldx ..] for t < n: the same values, bit for bit, as n calls of cpu_row_dot, but each
 * group of four tokens shares one pass over the weight row (prefill and batched decode).
 */
void cpu_row_dot_n(const tensor_view & w, int64_t r, const float * x, int64_t ldx, int n, float * y, int64_t ldy);
/**
 * cpu_row_dot_n for `rows` consecutive rows from r at once: row r + i's result for token t at y[t * ldy + i]. Bit for
 * bit the values of the single-row calls; on AVX-512, for two tokens or more, each converted weight vector serves up
 * to four tokens and each activation vector four rows (two for a remainder).
 */
void cpu_rows_dot_n(const tensor_view & w, int64_t r, int rows, const float * x, int64_t ldx, int n, float * y, int64_t ldy);
/** The same for row r of a qpacked matrix; equal to n calls of cpu_row_dot_q4. */
void cpu_row_dot_q4_n(const tensor_view & q, const tensor_view & scales, int group, int64_t r, const float * x, int64_t ldx, int n,
                      float * y, int64_t ldy);

/** out[i] = fp16(x[i]) (round to nearest even; the same bits on every path). */
void cpu_f32_to_f16(const float * x, uint16_t * out, int n);
/** y[i] += a * v[i], v FP16 bits (the attention's P.V over an FP16 value cache). */
void cpu_axpy_f16(float a, const uint16_t * v, float * y, int n);

/** Converts row `row` of a float tensor (BF16/F16/F32, shape [rows, n]) to float32. */
void cpu_row_to_f32(const tensor_view & t, int64_t row, float * out);

/** Tokens a pass over a matrix's rows takes (cpu_for_row_token_blocks): their FP32 activations of `in` values fill
 * at most half a megabyte, which L2 holds while the pass reads the rows. */
int cpu_matmul_token_pass(int64_t in);

/**
 * The order in which a matmul visits rows [r0, r1) and `tokens` tokens of `in` values: passes of
 * cpu_matmul_token_pass(in) tokens, in each every block of four rows, in each groups of four tokens; fn(row_begin,
 * row_end, t, nt) computes one block against one group. Past a pass the weights are read again, where a block of rows
 * against every token at once would read every token's activations from memory once a block (at 2,048 tokens, 16 MB
 * a block of four rows).
 */
template <class F>
void cpu_for_row_token_blocks(int64_t r0, int64_t r1, int tokens, int64_t in, F && fn) {
  const int pass = cpu_matmul_token_pass(in);
  for (int tp = 0; tp < tokens; tp += pass) {
    const int tpe = tokens - tp < pass ? tokens : tp + pass;
    for (int64_t rb = r0; rb < r1; rb += 4) {
      const int64_t re = r1 - rb < 4 ? r1 : rb + 4;
      for (int t = tp; t < tpe; t += 4) fn(rb, re, t, tpe - t < 4 ? tpe - t : 4);
    }
  }
}

/**
 * y[t * out + r] = W[r] . x[t * in ..] for t < tokens, W a float tensor [out, in]. Rows are split across the pool;
 * each (t, r) result depends only on W[r] and x[t], so it is the same whatever the batch.
 */
void cpu_matmul(const tensor_view & w, const float * x, int tokens, float * y, thread_pool & pool);

}  // namespace rt
