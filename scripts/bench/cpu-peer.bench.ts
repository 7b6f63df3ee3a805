/**
 * The CPU backend beside llama.cpp on the same machine and model, alternated: a full-size random OLMoE-1B-7B (the
 * project's generator), packed to INT4 by the project and converted by ../shared/peers/olmoe_to_gguf.py to Q4_0
 * experts + F16 rest (the matched representation) and to llama.cpp's stock Q4_0 mix. Prints prefill 128, decode
 * after 128 and after 1024 tokens, then the batch a CPU run of the app takes on this host (auto-batch.ts) as
 * llama-batched-bench measures it (that many prompts of 128 tokens prefilled together, then 32 decode steps of all of
 * them: tok/s over all sequences), and peak RSS for each runtime, medians over the pairs, and the ratios; ours also
 * with the LM head's INT8 screen turned off (HORIZON_CPU_LM_SCREEN=0), which shows what the screen gives decode.
 * Each pair's figures are printed as it ends, in the table's column order.
 *
 * Everything it builds or writes is cached under .cache/peers (llama.cpp's build, the checkpoint, the pack, the
 * GGUFs: about 30 GB): the first run takes an hour on two cores, later ones minutes. Skips with a message when
 * ../shared/peers is absent. Env: HORIZON_PEER_PAIRS (default 3), HORIZON_BENCH_THREADS (default 2),
 * HORIZON_PEER_LAYERS (default 16; fewer for a quick look), HORIZON_PEER_BATCH (default: the app's CPU batch).
 * Asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chooseBatch, cpuPlan, hostMemory, kvBytesPerToken, tensorBytes } from '../../electron/main/jobs/auto-batch.js';
import { loadNativeBinding } from '../../electron/worker/runtime/binding.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../make-tiny-model.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PEERS = path.resolve(ROOT, '..', 'shared', 'peers');
const CACHE = path.join(ROOT, '.cache', 'peers');

type Figures = {
  prefillTps: number;
  decode128Tps: number;
  decode1024Tps: number;
  batchPrefillTps: number;
  batchDecodeTps: number;
  maxRssBytes: number;
};
const FIGURES: readonly (keyof Figures)[] = ['prefillTps', 'decode128Tps', 'decode1024Tps', 'batchPrefillTps', 'batchDecodeTps', 'maxRssBytes'];
/** Decode steps of the batched part (llama-batched-bench's -ntg). */
const BATCH_NEW = 32;

function run(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { out: string; err: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${(r.stderr ?? '').slice(-2000)}`);
  return { out: r.stdout, err: r.stderr };
}

/** Runs under /usr/bin/time so the child's peak RSS is measured the same way for both runtimes. */
function timed(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { out: string; maxRssBytes: number } {
  const { out, err } = run('/usr/bin/time', ['-f', 'HORIZON_MAXRSS_KB=%M', cmd, ...args], env);
  const m = /HORIZON_MAXRSS_KB=(\d+)/.exec(err);
  return { out, maxRssBytes: m ? Number(m[1]) * 1024 : NaN };
}

/**
 * The x86 features of this host that ggml's CMake can name, as its options: every one the CPU has, for a build that
 * is -march=native less AMX. The pinned llama.cpp's AMX matmul (dense Q4_0 / Q6_K weights: the stock mix's attention
 * and output) crashed in ggml_backend_amx_mul_mat on a two-core Xeon with AMX (2026-12-07), and it never runs the
 * experts (AMX takes MUL_MAT, not MUL_MAT_ID); a user of such a host builds without it.
 */
export function ggmlFlagsWithoutAmx(cpuFlags: ReadonlySet<string>): string[] {
  const options: [string, boolean][] = [
    ['GGML_SSE42', cpuFlags.has('sse4_2')],
    ['GGML_AVX', cpuFlags.has('avx')],
    ['GGML_AVX2', cpuFlags.has('avx2')],
    ['GGML_FMA', cpuFlags.has('fma')],
    ['GGML_F16C', cpuFlags.has('f16c')],
    ['GGML_BMI2', cpuFlags.has('bmi2')],
    ['GGML_AVX_VNNI', cpuFlags.has('avx_vnni')],
    ['GGML_AVX512', ['avx512f', 'avx512cd', 'avx512vl', 'avx512dq', 'avx512bw'].every((f) => cpuFlags.has(f))],
    ['GGML_AVX512_VBMI', cpuFlags.has('avx512vbmi')],
    ['GGML_AVX512_VNNI', cpuFlags.has('avx512_vnni')],
    ['GGML_AVX512_BF16', cpuFlags.has('avx512_bf16')],
    ['GGML_AMX_TILE', false],
    ['GGML_AMX_INT8', false],
    ['GGML_AMX_BF16', false],
  ];
  return ['-DGGML_NATIVE=OFF', ...options.map(([name, on]) => `-D${name}=${on ? 'ON' : 'OFF'}`)];
}

function hostCpuFlags(): Set<string> {
  const line = existsSync('/proc/cpuinfo') ? /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] : undefined;
  return new Set((line ?? '').trim().split(/\s+/));
}

function buildLlama(): string {
  const cpuFlags = hostCpuFlags();
  const amx = cpuFlags.has('amx_int8');
  const build = path.join(CACHE, amx ? 'llama-cpu-noamx' : 'llama-cpu');
  const bin = path.join(build, 'bin');
  const targets = ['llama-bench', 'llama-quantize', 'llama-batched-bench'];
  if (targets.every((t) => existsSync(path.join(bin, t)))) return bin;
  // A build folder from before the batched part lacks only llama-batched-bench: a few minutes more.
  console.log(`cpu-peer: building llama.cpp (CPU) into ${path.relative(ROOT, build)} (15-20 min on two cores the first time)`);
  if (amx) console.log('cpu-peer: this CPU has AMX: the peer is built for its features less AMX, whose matmul crashes at this commit');
  run('cmake', ['-S', path.join(PEERS, 'llama.cpp'), '-B', build, '-DCMAKE_BUILD_TYPE=Release', ...(amx ? ggmlFlagsWithoutAmx(cpuFlags) : ['-DGGML_NATIVE=ON']),
    '-DLLAMA_CURL=OFF', '-DLLAMA_OPENSSL=OFF', '-DLLAMA_BUILD_SERVER=OFF', '-DLLAMA_BUILD_TESTS=OFF', '-DLLAMA_BUILD_EXAMPLES=OFF',
    '-DLLAMA_BUILD_APP=OFF', '-DLLAMA_BUILD_UI=OFF']);
  run('cmake', ['--build', build, '-j2', '--target', ...targets]);
  return bin;
}

/** Runs `make` into `dir` unless `dir` already holds a finished result (a `.done` marker written last). */
async function cached(dir: string, what: string, make: (tmp: string) => Promise<void>): Promise<string> {
  if (existsSync(path.join(dir, '.done'))) return dir;
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const t0 = performance.now();
  console.log(`cpu-peer: ${what} ...`);
  await make(tmp);
  writeFileSync(path.join(tmp, '.done'), new Date().toISOString());
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  console.log(`cpu-peer: ${what} took ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return dir;
}

function oursOnce(int4: string, threads: number, newTokens: number, batch: number, env: NodeJS.ProcessEnv = {}): Figures {
  const child = path.join(ROOT, 'scripts', 'bench', 'cpu-peer-child.ts');
  const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
  const { out, maxRssBytes } = timed(tsx, [child, int4, String(threads), String(newTokens), String(batch), String(BATCH_NEW)], env);
  const line = out.trim().split('\n').pop()!;
  const f = JSON.parse(line) as Figures & { isa: string };
  return { ...f, maxRssBytes };
}

function llamaOnce(bin: string, gguf: string, threads: number, newTokens: number, batch: number): Figures {
  const bench = path.join(bin, 'llama-bench');
  const common = ['-m', gguf, '-t', String(threads), '-r', '1', '-o', 'json'];
  const pp = timed(bench, [...common, '-p', '128', '-n', '0']);
  const tg = timed(bench, [...common, '-p', '0', '-n', String(newTokens), '-d', '128,1024']);
  type Row = { n_prompt: number; n_gen: number; n_depth: number; avg_ts: number };
  const batched = timed(path.join(bin, 'llama-batched-bench'), [
    '-m', gguf, '-t', String(threads), '-c', String(batch * (128 + BATCH_NEW) + 64), '-npp', '128', '-ntg', String(BATCH_NEW),
    '-npl', String(batch), '--output-format', 'jsonl',
  ]);
  const rows = [...(JSON.parse(pp.out) as Row[]), ...(JSON.parse(tg.out) as Row[])];
  const pick = (f: (r: Row) => boolean) => rows.find(f)?.avg_ts ?? NaN;
  type BatchedRow = { pl: number; speed_pp: number; speed_tg: number };
  const together = batched.out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as BatchedRow)
    .find((r) => r.pl === batch);
  return {
    prefillTps: pick((r) => r.n_prompt === 128 && r.n_gen === 0),
    decode128Tps: pick((r) => r.n_gen > 0 && r.n_depth === 128),
    decode1024Tps: pick((r) => r.n_gen > 0 && r.n_depth === 1024),
    batchPrefillTps: together?.speed_pp ?? NaN,
    batchDecodeTps: together?.speed_tg ?? NaN,
    maxRssBytes: Math.max(pp.maxRssBytes, tg.maxRssBytes, batched.maxRssBytes),
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/**
 * Every IFEval context of OLMoE's tokenizer, the longest prompt and 1,280 new tokens, is within this; the random
 * checkpoint's byte-level tokenizer would count its prompts several times longer.
 */
const OLMOE_IFEVAL_CONTEXT_BOUND = 2048;

/** The batch a CPU run of the app would take on this host (its memory, its INT4 kernel path) for this model's IFEval run. */
async function appCpuBatch(src: string, int4: string): Promise<number> {
  const kv = await kvBytesPerToken(src);
  if (kv === null) throw new Error(`cpu-peer: ${src}/config.json lacks the KV sizes`);
  const host = hostMemory();
  return chooseBatch(cpuPlan('int4', loadNativeBinding().probeDevices().cpuIsa), {
    memoryBytes: host.totalBytes, freeBytes: host.freeBytes, weightBytes: await tensorBytes(int4), kvBytesPerToken: kv,
    contextTokens: OLMOE_IFEVAL_CONTEXT_BOUND,
  });
}

export async function bench(): Promise<unknown> {
  if (!existsSync(path.join(PEERS, 'llama.cpp')) || !existsSync(path.join(PEERS, 'olmoe_to_gguf.py'))) {
    console.log(`cpu-peer: skipped: ${PEERS} (llama.cpp and olmoe_to_gguf.py) is not here`);
    return null;
  }
  const pairs = Number(process.env.HORIZON_PEER_PAIRS ?? 3);
  const threads = Number(process.env.HORIZON_BENCH_THREADS ?? 2);
  const layers = Number(process.env.HORIZON_PEER_LAYERS ?? 16);
  const newTokens = 64;
  const bin = buildLlama();
  const tag = `olmoe-${layers}l-seed1`;
  const src = await cached(path.join(CACHE, `${tag}-src`), `generating the full-size random checkpoint (${layers} layers)`, async (tmp) => {
    await makeTinyModel(tmp, { full: true, layers, seed: 1 });
  });
  const int4 = await cached(path.join(CACHE, `${tag}-int4`), 'packing it to INT4 (qpacked-v2)', async (tmp) => {
    await packModel({ src, dst: tmp, threads });
  });
  const batch = Number(process.env.HORIZON_PEER_BATCH ?? (await appCpuBatch(src, int4)));
  const ggufDir = await cached(path.join(CACHE, `${tag}-gguf`), 'converting it to GGUF (Q4_0 experts + F16, then the stock Q4_0 mix)', async (tmp) => {
    const matched = path.join(tmp, 'q4_0-experts-f16.gguf');
    run('python3', [path.join(PEERS, 'olmoe_to_gguf.py'), src, matched, '--rest', 'f16', '--experts', 'q4_0'], {
      PYTHONPATH: path.join(PEERS, 'llama.cpp', 'gguf-py'),
    });
    run(path.join(bin, 'llama-quantize'), ['--allow-requantize', matched, path.join(tmp, 'q4_0-stock.gguf'), 'Q4_0']);
  });
  const sides: Record<string, Figures[]> = { ours: [], unscreened: [], matched: [], stock: [] };
  for (let p = 0; p < pairs; p++) {
    const load0 = loadavg()[0]!;
    sides.ours!.push(oursOnce(int4, threads, newTokens, batch));
    sides.unscreened!.push(oursOnce(int4, threads, newTokens, batch, { HORIZON_CPU_LM_SCREEN: '0' }));
    sides.matched!.push(llamaOnce(bin, path.join(ggufDir, 'q4_0-experts-f16.gguf'), threads, newTokens, batch));
    sides.stock!.push(llamaOnce(bin, path.join(ggufDir, 'q4_0-stock.gguf'), threads, newTokens, batch));
    console.log(`cpu-peer: pair ${p + 1}/${pairs} done (load average before it ${load0.toFixed(2)})`);
    // Each run's figures, so that the spread behind the medians is on record.
    for (const [k, runs] of Object.entries(sides)) {
      const f = runs[p]!;
      console.log(`  ${k.padEnd(10)} ${FIGURES.slice(0, -1).map((x) => f[x].toFixed(1)).join(' / ')} tok/s, ${(f.maxRssBytes / 1e9).toFixed(1)} GB`);
    }
  }
  const med = Object.fromEntries(
    Object.entries(sides).map(([k, runs]) => [k, Object.fromEntries(FIGURES.map((f) => [f, median(runs.map((r) => r[f]))]))]),
  ) as Record<string, Figures>;
  const gb = (b: number) => `${(b / 1e9).toFixed(1)} GB`;
  const label: Record<string, string> = {
    ours: 'Horizon, INT4 hq4nl g32 experts + FP16',
    unscreened: 'Horizon, LM head without INT8 screen',
    matched: 'llama.cpp, Q4_0 experts + F16 rest',
    stock: 'llama.cpp, stock Q4_0 mix',
  };
  console.log(
    `\nCPU, ${threads} threads, full-size random OLMoE (${layers} layers), prompt 128, ${newTokens} new tokens; batch ${batch}: ` +
      `${batch} prompts of 128 prefilled together, ${BATCH_NEW} decode steps; medians of ${pairs} alternated runs`,
  );
  const bp = `b${batch} prefill`, bd = `b${batch} decode`;
  console.log(
    `  ${'runtime'.padEnd(40)} ${'prefill tok/s'.padStart(14)} ${'decode@128'.padStart(11)} ${'decode@1024'.padStart(12)} ` +
      `${bp.padStart(12)} ${bd.padStart(11)} ${'peak RSS'.padStart(9)}`,
  );
  for (const [k, f] of Object.entries(med)) {
    console.log(
      `  ${label[k]!.padEnd(40)} ${f.prefillTps.toFixed(1).padStart(14)} ${f.decode128Tps.toFixed(1).padStart(11)} ${f.decode1024Tps.toFixed(1).padStart(12)} ` +
        `${f.batchPrefillTps.toFixed(1).padStart(12)} ${f.batchDecodeTps.toFixed(1).padStart(11)} ${gb(f.maxRssBytes).padStart(9)}`,
    );
  }
  const o = med.ours!;
  const ratio = (p: Figures, f: keyof Figures) => `${(o[f] / p[f]).toFixed(2)}x`;
  for (const k of ['unscreened', 'matched', 'stock']) {
    const p = med[k]!;
    console.log(
      `  ratio vs ${label[k]!}: prefill ${ratio(p, 'prefillTps')}, decode@128 ${ratio(p, 'decode128Tps')}, decode@1024 ${ratio(p, 'decode1024Tps')}, ` +
        `${bp} ${ratio(p, 'batchPrefillTps')}, ${bd} ${ratio(p, 'batchDecodeTps')}, peak RSS ${ratio(p, 'maxRssBytes')}`,
    );
  }
  return { medians: med, runs: sides, files: readdirSync(CACHE) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bench();
}
