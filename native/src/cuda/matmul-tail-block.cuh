#pragma once
// The in-launch form of a matmul tail (device code, for the .cu files only): the GEMV kernels end with
// finish_with_tail, and the block that finishes last runs the tail's per-token work.
#include "cuda/argmax-block.cuh"
#include "cuda/common.cuh"
#include "cuda/matmul-tail.cuh"
#include "cuda/moe-group-block.cuh"
#include "cuda/moe-reduce-block.cuh"
#include "cuda/qk-norm-rope-block.cuh"
#include "cuda/rmsnorm-block.cuh"

namespace rt_cuda {

/** Whether a launch given `tail` ends with it (the launch code picks the kernel by it, the kernel checks it). */
__host__ __device__ inline bool tail_in_this_launch(const rt_cuda_matmul_tail & tail) {
  return tail.kind != rt_matmul_tail_kind::none && tail.arrivals != nullptr;
}

/**
 * Every thread of every block of the launch calls this after its share of the matmul (rows block_row0 ..
 * block_row0 + block_rows of y); the last block to arrive runs `tail` over y. `smem`: rt_cuda_matmul_tail_smem bytes
 * of dynamic shared memory. The argmax is shared out: each block first leaves the best of its own rows, and the last
 * block picks among those (a vocabulary of 50,304 would take one block a hundred rounds of loads).
 */
__device__ __forceinline__ void finish_with_tail(const rt_cuda_matmul_tail & tail, float * y, int rows, int ldy,
                                                 void * smem, int block_row0, int block_rows) {
  if (!tail_in_this_launch(tail)) return;
  const int blocks = static_cast<int>(gridDim.x * gridDim.y * gridDim.z);
  if (tail.kind == rt_matmul_tail_kind::argmax) {
    __syncthreads();  // the rows this block's warps wrote are read back
    const int b = static_cast<int>(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
    const int r1 = min(rows, block_row0 + block_rows);
    for (int t = 0; t < tail.n_tokens; ++t) {
      argmax_partial(y + static_cast<size_t>(t) * ldy, block_row0, r1, rows,
                     tail.argmax_partials + static_cast<size_t>(t) * tail.argmax_partials_per_token + b);
    }
  }
  if (!last_block_arrived(tail.arrivals, static_cast<unsigned>(blocks))) return;
  __shared__ float scratch[32];
  switch (tail.kind) {
    case rt_matmul_tail_kind::rmsnorm:
      for (int t = 0; t < tail.n_tokens; ++t) {
        rmsnorm_row(y + static_cast<size_t>(t) * ldy, tail.norm_w, tail.eps, rows,
                    tail.out16 + static_cast<size_t>(t) * rows, nullptr, scratch);
      }
      break;
    case rt_matmul_tail_kind::route:
      route_and_group_block(y, tail.n_tokens, rows, tail.k, tail.norm_topk_prob, tail.ids, tail.weights, tail.offsets,
                            tail.sorted, tail.sorted_token, tail.active, static_cast<int *>(smem));
      break;
    case rt_matmul_tail_kind::qk_norm_rope: {
      rt_cuda_qk_norm_rope_args a = tail.qk;
      a.qkv = y;
      a.ld = ldy;
      for (int t = 0; t < tail.n_tokens; ++t) qk_norm_rope_token(a, t, scratch);
      break;
    }
    case rt_matmul_tail_kind::moe_reduce:
      for (int t = 0; t < tail.n_tokens; ++t) {
        moe_reduce_token(y, tail.weights, tail.k, rows, tail.x, tail.norm_w, tail.eps, tail.out16, t, scratch);
      }
      break;
    case rt_matmul_tail_kind::argmax:
      for (int t = 0; t < tail.n_tokens; ++t) {
        argmax_of_partials(tail.argmax_partials + static_cast<size_t>(t) * tail.argmax_partials_per_token, blocks,
                           rows, tail.argmax_out + t);
      }
      break;
    default:
      break;
  }
}

}  // namespace rt_cuda
