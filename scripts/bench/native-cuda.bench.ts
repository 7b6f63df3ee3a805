/**
 * CUDA backend figures through the addon on an OLMoE-1B-7B-shaped random model (full widths, HORIZON_BENCH_LAYERS
 * layers, default 4): TTFT, decode tokens/s at batch 1 and 8 (excluding the first token), peak VRAM, expert traffic,
 * for full residency and a partial budget (HORIZON_BENCH_SLOTS slots per layer, default 16). Prints "skipped: no
 * CUDA device" where there is none; asserts nothing. The full 16-layer benchmark without Node is scripts/gpu-check.sh.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { loadModel, loadNativeBinding } from '../../electron/worker/runtime/binding.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../make-tiny-model.js';

type Row = { what: string; value: string; note: string };

function cudaSkipReason(): string | null {
  try {
    const probe = loadNativeBinding().probeDevices();
    if (!probe.cudaCompiled) return 'the addon was built without CUDA';
    if (probe.devices.length === 0) return probe.error || 'no device found';
    return null;
  } catch (e) {
    return `the addon did not load (${(e as Error).message})`;
  }
}

export async function bench(): Promise<Row[]> {
  const reason = cudaSkipReason();
  if (reason !== null) {
    console.log(`\nnative CUDA backend: skipped: no CUDA device (${reason})`);
    return [];
  }
  const layers = Number(process.env.HORIZON_BENCH_LAYERS ?? 4);
  const slots = Number(process.env.HORIZON_BENCH_SLOTS ?? 16);
  const root = mkdtempSync(join(tmpdir(), 'horizon-bench-cuda-'));
  const rows: Row[] = [];
  try {
    const src = await makeTinyModel(join(root, 'src'), { full: true, layers, seed: 1 });
    const packed = join(root, 'packed');
    await packModel({ src: src.dir, dst: packed });
    const prompt = Array.from({ length: 128 }, (_, i) => 100 + i * 7);
    for (const [label, extra] of [['full', {}], [`partial ${slots} slots`, { expertSlots: slots }]] as const) {
      const model = await loadModel({ dir: packed, weights: 'int4', backend: 'cuda', maxContext: 1024, ...extra });
      try {
        await model.generate({ prompts: [prompt.slice(0, 8)], maxNewTokens: 4 });
        for (const batch of [1, 8]) {
          const prompts = Array.from({ length: batch }, (_, b) => prompt.map((t) => t + b));
          const out = await model.generate({ prompts, maxNewTokens: 64, stopTokens: [] });
          const r = out.results[0]!;
          const s = out.stats;
          const decode = out.results.reduce((sum, x) => sum + x.decodeTokensPerSecond, 0);
          rows.push({
            what: `${label} b${batch}`,
            value: `${decode.toFixed(1)} tok/s`,
            note:
              `TTFT ${r.ttftMs.toFixed(1)} ms (${r.promptTokens} tokens), peak VRAM ${(s.peakMemoryBytes / 2 ** 30).toFixed(2)} GiB (${s.peakMemoryScope}), ` +
              `hits ${s.expertHits} misses ${s.expertMisses} evictions ${s.expertEvictions ?? 0} H2D ${(s.h2dBytes / 1e9).toFixed(2)} GB D2H ${s.d2hBytes}`,
          });
        }
      } finally {
        model.close();
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`\nnative CUDA backend (OLMoE-1B-7B widths, ${layers} layers, random weights)`);
  for (const r of rows) console.log(`  ${r.what.padEnd(22)} ${r.value.padStart(14)}   ${r.note}`);
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bench();
}
