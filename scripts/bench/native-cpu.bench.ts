/**
 * CPU backend figures on an OLMoE-1B-7B-shaped random model (full widths: hidden 2048, 64 experts, top-8,
 * vocab 50304) with fewer layers so it runs in a few minutes: INT4 pack MB/s, then decode tokens/s for bf16 and
 * int4. Prints a table; asserts nothing. Layers: HORIZON_BENCH_LAYERS (default 2); threads: HORIZON_BENCH_THREADS.
 * Run alone with `npx tsx scripts/bench/native-cpu.bench.ts`.
 */
import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { loadModel } from '../../electron/worker/runtime/binding.js';
import type { WeightsKind } from '../../electron/worker/runtime/binding.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../make-tiny-model.js';

type Row = { what: string; value: string; note: string };

/** Reads every file of `dir` once so decode figures measure memory, not the disk. */
function warmPageCache(dir: string): void {
  const buf = Buffer.alloc(16 << 20);
  for (const name of readdirSync(dir)) {
    const fd = openSync(join(dir, name), 'r');
    try {
      while (readSync(fd, buf, 0, buf.length, null) > 0);
    } finally {
      closeSync(fd);
    }
  }
}

export async function bench(): Promise<Row[]> {
  const layers = Number(process.env.HORIZON_BENCH_LAYERS ?? 2);
  const threads = process.env.HORIZON_BENCH_THREADS ? Number(process.env.HORIZON_BENCH_THREADS) : undefined;
  const root = mkdtempSync(join(tmpdir(), 'horizon-bench-cpu-'));
  const rows: Row[] = [];
  try {
    const t0 = performance.now();
    const src = await makeTinyModel(join(root, 'src'), { full: true, layers, seed: 1 });
    rows.push({ what: 'generate model', value: `${((performance.now() - t0) / 1000).toFixed(1)} s`, note: `${layers} of 16 layers, full widths` });

    let packEnd = 0;
    let sourceBytes = 0;
    const p0 = performance.now();
    const manifest = await packModel({
      src: src.dir,
      dst: join(root, 'packed'),
      threads,
      onProgress: (p) => {
        if (p.phase === 'pack') {
          sourceBytes = p.totalBytes;
          if (p.doneBytes === p.totalBytes) packEnd = performance.now();
        }
      },
    });
    const packS = (packEnd - p0) / 1000;
    const totalS = (performance.now() - p0) / 1000;
    rows.push({ what: 'INT4 pack', value: `${(sourceBytes / 1e6 / packS).toFixed(0)} MB/s`, note: `${(sourceBytes / 1e9).toFixed(2)} GB source in ${packS.toFixed(1)} s, group ${manifest.group_size}` });
    rows.push({ what: 'pack + sha256 manifest', value: `${totalS.toFixed(1)} s`, note: 'hashes source and output files' });

    const prompt = Array.from({ length: 32 }, (_, i) => 100 + i * 7);
    const single = new Map<WeightsKind, { tps: number; ttft: number }>();
    for (const [weights, dir] of [['bf16', src.dir], ['int4', join(root, 'packed')]] as [WeightsKind, string][]) {
      warmPageCache(dir);
      const model = await loadModel({ dir, weights, backend: 'cpu', threads });
      try {
        const out = await model.generate({ prompts: [prompt], maxNewTokens: 24 });
        const r = out.results[0]!;
        const info = model.info();
        single.set(weights, { tps: r.decodeTokensPerSecond, ttft: r.ttftMs });
        rows.push({
          what: `decode ${weights}`,
          value: `${r.decodeTokensPerSecond.toFixed(2)} tok/s`,
          note: `TTFT ${r.ttftMs.toFixed(0)} ms for ${r.promptTokens} prompt tokens, ${info.threads} threads, ${info.simd ? 'AVX2' : 'scalar'}; ${layers}-layer model (the full model has 16)`,
        });
        if (weights === 'int4') {
          // Eight prompts decoded together: every step reads each active weight row once for all of them.
          const batch = Array.from({ length: 8 }, (_, b) => prompt.map((t) => t + b));
          const many = await model.generate({ prompts: batch, maxNewTokens: 16, stopTokens: [] });
          const steps = many.results.reduce((n, x) => n + Math.max(0, x.tokens.length - 1), 0);
          const batchTps = steps / (many.stats.decodeMs / 1000);
          rows.push({
            what: 'decode int4, batch 8',
            value: `${batchTps.toFixed(2)} tok/s`,
            note: `${(batchTps / r.decodeTokensPerSecond).toFixed(2)}x batch 1 (all 8 sequences, tokens after the first)`,
          });
        }
      } finally {
        model.close();
      }
    }
    const bf16 = single.get('bf16');
    const int4 = single.get('int4');
    if (bf16 && int4) {
      rows.push({
        what: 'int4 / bf16',
        value: `${(int4.tps / bf16.tps).toFixed(2)}x decode`,
        note: `TTFT ${(bf16.ttft / int4.ttft).toFixed(2)}x shorter; experts are 4-bit with FP16 scales per group`,
      });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`\nnative CPU backend (OLMoE-1B-7B widths, random weights, ${layers} of 16 layers; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores)`);
  for (const r of rows) console.log(`  ${r.what.padEnd(24)} ${r.value.padStart(14)}   ${r.note}`);
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bench();
}
