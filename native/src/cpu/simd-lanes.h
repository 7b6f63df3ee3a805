#pragma once
// The x86 target attributes of the CPU kernels (one binary for every x86-64 CPU: each kernel is compiled for its ISA
// and chosen at run time) and the lane loaders that widen BF16/F16/F32 weights to float: `one` a single element,
// `eight` (AVX2) and `sixteen` (AVX-512) contiguous ones.
#include <cstdint>

#include "quant/qpacked.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define RT_X86_SIMD 1
#define RT_AVX2 __attribute__((target("avx2,fma,f16c")))
#define RT_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl")))
#if !defined(_MSC_VER)
#define RT_HAVE_AVX512 1
#endif
#include "cpu/x86-intrinsics.h"
#elif defined(_MSC_VER) && defined(_M_X64)
// MSVC emits AVX2 intrinsics without /arch flags; the run-time check keeps older CPUs on the scalar path.
#define RT_X86_SIMD 1
#define RT_AVX2
#include <intrin.h>

#include "cpu/x86-intrinsics.h"
#endif

// Unrolls the next loop fully where the compiler takes the hint (the kernels' accumulator arrays must stay in
// registers; MSVC has no such pragma and is left to itself).
#define RT_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define RT_UNROLL(n) RT_PRAGMA(unroll n)
#elif defined(__GNUC__)
#define RT_UNROLL(n) RT_PRAGMA(GCC unroll n)
#else
#define RT_UNROLL(n)
#endif

namespace rt::lanes {

struct f32_lanes {
  using elem = float;
  static float one(float v) { return v; }
#ifdef RT_X86_SIMD
  RT_AVX2 static __m256 eight(const float * p) { return _mm256_loadu_ps(p); }
#endif
#ifdef RT_HAVE_AVX512
  RT_AVX512 static __m512 sixteen(const float * p) { return _mm512_loadu_ps(p); }
#endif
};
struct bf16_lanes {
  using elem = uint16_t;
  static float one(uint16_t v) { return f32_from_bf16(v); }
#ifdef RT_X86_SIMD
  RT_AVX2 static __m256 eight(const uint16_t * p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
#endif
#ifdef RT_HAVE_AVX512
  RT_AVX512 static __m512 sixteen(const uint16_t * p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
#endif
};
struct f16_lanes {
  using elem = uint16_t;
  static float one(uint16_t v) { return f32_from_fp16(v); }
#ifdef RT_X86_SIMD
  RT_AVX2 static __m256 eight(const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }
#endif
#ifdef RT_HAVE_AVX512
  RT_AVX512 static __m512 sixteen(const uint16_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p))); }
#endif
};

}  // namespace rt::lanes
