#pragma once
// Tensor-core building blocks of the sm_80+ matmul kernels (matmul-w4a16-mma.cu, matmul-f16-mma.cu): one m16n8k16
// FP16 MMA with FP32 accumulation and the column order both kernels share.
//
// Fragments (PTX ISA, lane = 4 * g + t): A (16 x 16, row-major) a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..2t+1],
// a[2] = A[g][2t+8..2t+9], a[3] = A[g+8][2t+8..2t+9]; B (16 x 8) b[0] = B[2t..2t+1][g], b[1] = B[2t+8..2t+9][g];
// C/D (16 x 8, FP32) c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1]. A is the tokens' activations (m = token),
// B the weights (n = output row, k = column).
//
// Column order: a k-step's sum does not depend on which columns its 16 k positions are, as long as A and B agree. In
// k-step s (0..7) of a 128-column slab, lane t takes columns 32t + 4s .. 32t + 4s + 3 as its k positions 2t, 2t+1,
// 2t+8, 2t+9. So a lane reads one contiguous 32-column run of a weight row per slab (16 bytes of INT4, 64 of FP16;
// the row's four lanes together 64 or 256 contiguous bytes) and 16 contiguous bytes of an activation row per two
// k-steps.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace rt_cuda {

/** Columns of one slab: four lanes of 32 columns. */
constexpr int MMA_SLAB = 128;

/** d += A B for the calling warp (all 32 lanes). Launched only on sm_80 and newer. */
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(RT_CUDA_SIM)
  ::rt_sim::mma_m16n8k16(d, a, b);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(__CUDA_ARCH__)
  __trap();  // the launch code never picks a tensor-core kernel below sm_80
#endif
}

/**
 * The A fragments of two k-steps (2i, 2i+1 of a slab) from 8 contiguous FP16 activations of row g (`lo`, columns
 * 32t + 8i ..) and of row g + 8 (`hi`).
 */
__device__ __forceinline__ void a_frags(const uint4 & lo, const uint4 & hi, uint32_t (&even)[4], uint32_t (&odd)[4]) {
  even[0] = lo.x;
  even[1] = hi.x;
  even[2] = lo.y;
  even[3] = hi.y;
  odd[0] = lo.z;
  odd[1] = hi.z;
  odd[2] = lo.w;
  odd[3] = hi.w;
}

/**
 * The activation rows this lane's A fragments read for MT token tiles from entry `first`: rows g and g + 8 of each
 * tile (g = lane / 4), entry e's row rows_in[e] (e itself without rows_in), null at entries `end` and past.
 */
template <int MT>
__device__ __forceinline__ void a_rows(const __half * x, int ldx, const int * rows_in, int first, int end,
                                       const __half * (&xp)[MT][2]) {
  const int g = (threadIdx.x & 31) >> 2;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int e = first + 16 * mt + g + 8 * h;
      xp[mt][h] = e < end ? x + static_cast<size_t>(rows_in != nullptr ? rows_in[e] : e) * ldx : nullptr;
    }
}

/** Every accumulator of MT x NT tiles set to zero. */
template <int MT, int NT>
__device__ __forceinline__ void zero_acc(float (&acc)[MT][NT][4]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0f;
}

/** The A fragments of k-steps 2i and 2i+1 for MT token tiles: 16 bytes from column `col` of each row in `xp`
 * (rows g and g + 8 of each tile; null past the tokens reads as zeros). */
template <int MT>
__device__ __forceinline__ void load_a_frags(const __half * const (&xp)[MT][2], int col, uint32_t (&even)[MT][4],
                                             uint32_t (&odd)[MT][4]) {
  const uint4 z = make_uint4(0, 0, 0, 0);
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const uint4 lo = xp[mt][0] != nullptr ? __ldg(reinterpret_cast<const uint4 *>(xp[mt][0] + col)) : z;
    const uint4 hi = xp[mt][1] != nullptr ? __ldg(reinterpret_cast<const uint4 *>(xp[mt][1] + col)) : z;
    a_frags(lo, hi, even[mt], odd[mt]);
  }
}

/** acc[.][nt] += the two k-steps' products of every token tile with weight tile nt (B fragments be, bo). */
template <int MT, int NT>
__device__ __forceinline__ void mma_two_steps(float (&acc)[MT][NT][4], int nt, const uint32_t (&ae)[MT][4],
                                              const uint32_t (&ao)[MT][4], const uint32_t (&be)[2], const uint32_t (&bo)[2]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    mma_16816(acc[mt][nt], ae[mt], be);
    mma_16816(acc[mt][nt], ao[mt], bo);
  }
}

/** Whether the device that launches next can run the tensor-core kernels (sm_80 or newer). */
bool mma_available();

}  // namespace rt_cuda
