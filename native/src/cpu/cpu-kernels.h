#pragma once
// CPU kernels: row dot products over BF16/F16/F32 weights and qpacked-v2 INT4 rows (dequantised in the kernel),
// with an AVX2/FMA/F16C path chosen at run time and a scalar path that is the reference.
#include <cstdint>

#include "core/model-weights.h"

namespace rt {

/** True when the AVX2 path is in use (CPU supports AVX2+FMA+F16C and it was not disabled). */
bool cpu_kernels_simd();
/** True when the AVX-512 paths are in use too (AVX-512 F/BW/VL on this CPU, and the SIMD path not switched off). */
bool cpu_kernels_avx512();
/** The float kernels' vector width: the dense panels' and attention's paths. */
enum class cpu_float_path { scalar, avx2, avx512 };
/**
 * AVX-512 where the INT4 kernels take it too, or where AVX-512 F/BW/VL is there without VNNI (their best is AVX2);
 * a cap by HORIZON_CPU_ISA or the tests' cpu_isa_force applies here as well.
 */
cpu_float_path cpu_float_path_active();
/** "avx512", "avx2" or "scalar". */
const char * cpu_float_path_name(cpu_float_path path);
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
 * group of four tokens shares one pass over the weight row (the row-at-a-time reference of cpu_rows_dot_n).
 */
void cpu_row_dot_n(const tensor_view & w, int64_t r, const float * x, int64_t ldx, int n, float * y, int64_t ldy);
/**
 * cpu_row_dot_n over rows r .. r + count - 1, row r + k's outputs at y[k + t * ldy]: the same bits, in tiles of three
 * rows by two tokens (the float experts: BF16 runs and the quality check's passes).
 */
void cpu_rows_dot_n(const tensor_view & w, int64_t r, int64_t count, const float * x, int64_t ldx, int n, float * y, int64_t ldy);
/**
 * cpu_rows_dot_n over rows of a float tensor rounded as llama.cpp's Q4_0 rounds them (quant/q4-0.h; `in` a multiple
 * of 32), with float activations: the quality check's point of comparison, not a kernel of the product.
 */
void cpu_rows_dot_q4_0_n(const tensor_view & w, int64_t r, int64_t count, const float * x, int64_t ldx, int n, float * y, int64_t ldy);
/** The same for row r of a qpacked matrix; equal to n calls of cpu_row_dot_q4. */
void cpu_row_dot_q4_n(const tensor_view & q, const tensor_view & scales, int group, int64_t r, const float * x, int64_t ldx, int n,
                      float * y, int64_t ldy);

/** out[i] = fp16(x[i]) (round to nearest even; the same bits on every path). */
void cpu_f32_to_f16(const float * x, uint16_t * out, int n);
/** y[i] += a * v[i], v FP16 bits (the attention's P.V over an FP16 value cache). */
void cpu_axpy_f16(float a, const uint16_t * v, float * y, int n);

/** Converts row `row` of a float tensor (BF16/F16/F32, shape [rows, n]) to float32. */
void cpu_row_to_f32(const tensor_view & t, int64_t row, float * out);

}  // namespace rt
