/**
 * `npm run bench [-- --only NAME[,NAME]] [--list]`: runs every `scripts/bench/<name>.bench.ts` in name order, each
 * exporting `bench(): Promise<unknown>` that prints its own figures (benches never assert times). To add one, drop a
 * `<name>.bench.ts` exporting `bench` into scripts/bench/. A failing bench is reported and the rest still run.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bench');
const SUFFIX = '.bench.ts';

/** Bench names (file names without `.bench.ts`) in scripts/bench, sorted. */
export function listBenches(dir: string = BENCH_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(SUFFIX))
    .map((f) => f.slice(0, -SUFFIX.length))
    .sort();
}

/** The benches `--only` selects: exact names, else names containing the filter; throws naming an unmatched filter. */
export function selectBenches(all: readonly string[], only: string | undefined): string[] {
  if (!only) return [...all];
  const picked = new Set<string>();
  for (const f of only.split(',').map((s) => s.trim()).filter(Boolean)) {
    const hits = all.includes(f) ? [f] : all.filter((n) => n.includes(f));
    if (hits.length === 0) throw new Error(`no bench matches '${f}' (have: ${all.join(', ')})`);
    for (const h of hits) picked.add(h);
  }
  return all.filter((n) => picked.has(n));
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { only: { type: 'string' }, list: { type: 'boolean' } } });
  const all = listBenches();
  if (values.list) {
    console.log(all.join('\n'));
    return 0;
  }
  let chosen: string[];
  try {
    chosen = selectBenches(all, values.only);
  } catch (e) {
    console.error(`bench: ${(e as Error).message}`);
    return 2;
  }
  const failed: string[] = [];
  for (const name of chosen) {
    console.log(`\n=== bench: ${name} ===`);
    const t0 = performance.now();
    try {
      const mod = (await import(pathToFileURL(path.join(BENCH_DIR, `${name}${SUFFIX}`)).href)) as { bench?: () => Promise<unknown> };
      if (typeof mod.bench !== 'function') throw new Error(`scripts/bench/${name}${SUFFIX} does not export bench()`);
      await mod.bench();
      console.log(`=== ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s ===`);
    } catch (e) {
      failed.push(name);
      console.log(`=== ${name}: FAILED after ${((performance.now() - t0) / 1000).toFixed(1)} s: ${e instanceof Error ? e.message : String(e)} ===`);
    }
  }
  if (failed.length > 0) console.log(`\n${failed.length} of ${chosen.length} benches failed: ${failed.join(', ')}`);
  return failed.length > 0 ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
