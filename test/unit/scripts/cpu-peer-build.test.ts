import { describe, expect, it } from 'vitest';

import { ggmlFlagsWithoutAmx } from '../../../scripts/bench/cpu-peer.bench.js';

/** /proc/cpuinfo flags of the two-core Xeon whose llama.cpp AMX matmul crashed, trimmed to what matters here. */
const XEON_AMX = 'fpu sse4_2 avx f16c fma bmi2 avx2 avx512f avx512dq avx512cd avx512bw avx512vl avx_vnni avx512_bf16 avx512vbmi avx512_vnni amx_bf16 amx_tile amx_int8';

describe('the peer build for a host with AMX', () => {
  it('names every feature the CPU has and turns AMX off', () => {
    expect(ggmlFlagsWithoutAmx(new Set(XEON_AMX.split(' ')))).toEqual([
      '-DGGML_NATIVE=OFF',
      '-DGGML_SSE42=ON', '-DGGML_AVX=ON', '-DGGML_AVX2=ON', '-DGGML_FMA=ON', '-DGGML_F16C=ON', '-DGGML_BMI2=ON',
      '-DGGML_AVX_VNNI=ON', '-DGGML_AVX512=ON', '-DGGML_AVX512_VBMI=ON', '-DGGML_AVX512_VNNI=ON', '-DGGML_AVX512_BF16=ON',
      '-DGGML_AMX_TILE=OFF', '-DGGML_AMX_INT8=OFF', '-DGGML_AMX_BF16=OFF',
    ]);
  });

  it('leaves AVX-512 off unless all five of its base subsets are there', () => {
    const flags = ggmlFlagsWithoutAmx(new Set(['avx2', 'fma', 'f16c', 'avx512f', 'avx512cd', 'avx512vl', 'avx512dq']));
    expect(flags).toContain('-DGGML_AVX512=OFF');
    expect(flags).toContain('-DGGML_AVX2=ON');
    expect(flags).toContain('-DGGML_AVX_VNNI=OFF');
  });
});
