#pragma once
// 4-bit weight rows (qpacked-v2, group 32) against 8-bit quantised activations: integer dot products per 32-column
// block, then one float multiply-add by the two scales. The scalar path is the reference; AVX2 (maddubs + madd),
// AVX-VNNI and AVX-512 VNNI (dpbusd on 256-bit vectors) are chosen at run time by CPUID, so one binary serves every
// x86-64 CPU.
#include <cstdint>

namespace rt {

/** Columns per activation block; equal to the weight group these kernels read. */
constexpr int kQ8Block = 32;

enum class cpu_isa : int { scalar = 0, avx2 = 1, avx_vnni = 2, avx512_vnni = 3 };

const char * cpu_isa_name(cpu_isa isa);
/** True when this CPU (and OS) can run `isa`. */
bool cpu_isa_supported(cpu_isa isa);
/** The path the kernels take now: the best supported one unless forced. */
cpu_isa cpu_isa_active();
/** Forces a path (tests); false, and no change, when the CPU cannot run it. */
bool cpu_isa_force(cpu_isa isa);
/** Back to the best supported path. */
void cpu_isa_reset();

/**
 * Quantises n floats (n % 32 == 0) to int8: per block of 32, d = max|x| / 127 and q = round-half-even(x * (127 /
 * max|x|)) (all zero when max|x| is 0), and sum = the block's sum of q (exact as a float). Each block's 32 bytes hold
 * the even columns first, then the odd ones, the order the packed nibbles unpack to.
 */
void cpu_quantize_q8(const float * x, int n, int8_t * q, float * d, float * sum);

/** Rows of activations quantised by cpu_quantize_q8: token t's bytes at q + t * ld, its block scales and sums at
 * d + t * ld / 32 and sum + t * ld / 32. */
struct q8_rows {
  const int8_t * q;
  const float * d;
  const float * sum;
  int64_t ld;
  q8_rows from(int64_t t) const { return {q + t * ld, d + t * (ld / kQ8Block), sum + t * (ld / kQ8Block), ld}; }
};

/**
 * y[t * ldy] = sum over blocks b of (sum_c K[u_c] * q_t[c]) * (w_scale[b] * d_t[b]) for t < n tokens, one packed row
 * (cols/2 bytes, cols/32 FP16 scales) against n tokens of `a`. Integer sums are exact on every path (the VNNI ones add
 * 128 * sum(q) and take it back: the pair kernels, for rows of a multiple of 8 blocks, in the integer sums, the tiles
 * as one float term a block); the float accumulation order differs between paths.
 */
void cpu_row_dot_q4q8_n(const uint8_t * qrow, const uint16_t * srow, int cols, const q8_rows & a, int n, float * y, int64_t ldy);

/**
 * cpu_row_dot_q4q8_n over `rows` consecutive rows of one matrix (q and scales at its first row): row r's result for
 * token t goes to y[r + t * ldy]. The same values as a call per row; one call lets a path keep its set-up across rows.
 */
void cpu_rows_dot_q4q8(const uint8_t * q, const uint16_t * scales, int cols, int64_t rows, const q8_rows & a, int n, float * y, int64_t ldy);

}  // namespace rt
