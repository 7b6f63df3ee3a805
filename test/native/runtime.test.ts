/**
 * The native runtime through its TS binding on a generated tiny OLMoE: load errors, logits, streamed greedy
 * generation (batched = one by one), AbortSignal cancellation, and `horizon pack --progress-json` + manifest hashes.
 * To add a case, add an `it` using the shared `model` (bf16) or the packed folder.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { TinyModel } from '../../scripts/make-tiny-model.js';
import { isNativeError, loadModel, loadNativeBinding } from '../../electron/worker/runtime/binding.js';
import type { NativeModel } from '../../electron/worker/runtime/binding.js';
import { packModel, type PackManifest } from '../../electron/worker/runtime/pack.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const CLI = join(REPO, 'scripts', 'horizon.mjs');

function addonHasRuntime(): boolean {
  try {
    return typeof loadNativeBinding().loadModel === 'function';
  } catch {
    return false;
  }
}

const PROMPTS = [
  [5, 17, 42],
  [9, 60, 11, 2, 33, 48, 7],
  [100],
];

/**
 * Runs `workerSrc` (the body of an async function with `b` the addon, `parentPort`, and `opts` the load options of the
 * model in `modelDir`) in `times` worker threads one after another, terminating each at its first message; then the
 * main thread loads a model of its own (the workers loaded the addon too: one constructor each). What it printed.
 */
function afterTerminatedWorkers(modelDir: string, workerSrc: string, times: number): string {
  const addon = process.env.HORIZON_NATIVE_ADDON ?? join(REPO, 'native', 'build', 'Release', 'horizon_runtime.node');
  const opts = `{ dir: ${JSON.stringify(modelDir)}, weights: 'bf16', backend: 'cpu', threads: 1 }`;
  const src = `
    const b = require(${JSON.stringify(addon)});
    const { parentPort } = require('node:worker_threads');
    const opts = ${opts};
    (async () => {${workerSrc}
    })();`;
  const script = `
    const { Worker } = require('node:worker_threads');
    (async () => {
      for (let i = 0; i < ${times}; i++) {
        const w = new Worker(${JSON.stringify(src)}, { eval: true });
        await new Promise((r) => w.once('message', r));
        await w.terminate();
      }
      const m = await require(${JSON.stringify(addon)}).loadModel(${opts});
      console.log('alive', m.info().vocabSize);
    })();`;
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

describe.skipIf(!addonHasRuntime())('native runtime (skipped when the addon lacks loadModel: run npm run build:native)', () => {
  let root: string;
  let tiny: TinyModel;
  let model: NativeModel;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'horizon-runtime-'));
    tiny = await makeTinyModel(join(root, 'tiny'), { seed: 5 });
    model = await loadModel({ dir: tiny.dir, weights: 'bf16', backend: 'cpu', threads: 2 });
  });
  afterAll(() => {
    model?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('reports the config and labels the backend cpu', () => {
    const info = model.info();
    expect(info).toMatchObject({ backend: 'cpu', weights: 'bf16', hiddenSize: 64, numExperts: 8, expertsPerToken: 2, groupSize: 0 });
    expect(info.deviceExpertSlots).toBe(0);
    expect(info.deviceBytes).toBe(0);
    expect(info.fault).toBe('');
    expect(info.vocabSize).toBe(tiny.config.vocab_size);
    expect(info.eosTokenIds).toEqual([tiny.eosTokenId]);
  });

  it('returns one finite vocab-sized row of logits per position', async () => {
    const rows = await model.logits([1, 2, 3, 4]);
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(r).toBeInstanceOf(Float32Array);
      expect(r.length).toBe(tiny.config.vocab_size);
      expect(r.every(Number.isFinite)).toBe(true);
    }
    const again = await model.logits([1, 2]);
    expect(Array.from(again[1]!)).toEqual(Array.from(rows[1]!));
  });

  it('computes the logits from a position on alone: the same rows, bit for bit', async () => {
    const rows = await model.logits([1, 2, 3, 4]);
    for (const from of [1, 3]) {
      const tail = await model.logits([1, 2, 3, 4], { from });
      expect(tail).toHaveLength(4 - from);
      tail.forEach((r, i) => expect(Array.from(r), `from ${from}, row ${i}`).toEqual(Array.from(rows[from + i]!)));
    }
    await expect(model.logits([1, 2, 3, 4], { from: 4 })).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'logits: from 4 is outside the 4 tokens',
    });
    await expect(model.logits([1, 2], { from: -1 })).rejects.toThrow(/logits: from must be an integer from 0/);
    await expect(model.logits([1, 2], { from: 0.5 })).rejects.toThrow(/logits: from must be an integer from 0/);
  });

  it('streams tokens in order, and a batch equals one-by-one generation', async () => {
    const streamed: number[][] = PROMPTS.map(() => []);
    const batched = await model.generate({ prompts: PROMPTS, maxNewTokens: 6 }, (i, t) => streamed[i]!.push(t));
    expect(batched.results.map((r) => r.tokens)).toEqual(streamed);
    for (const [i, p] of PROMPTS.entries()) {
      const single = await model.generate({ prompts: [p], maxNewTokens: 6 });
      expect(single.results[0]!.tokens).toEqual(batched.results[i]!.tokens);
      expect(batched.results[i]).toMatchObject({ promptTokens: p.length, finishReason: 'length' });
      expect(batched.results[i]!.ttftMs).toBeGreaterThan(0);
      expect(batched.results[i]!.decodeTokensPerSecond).toBeGreaterThan(0);
    }
    expect(batched.stats.expertHits).toBeGreaterThan(0);
    expect(batched.stats.peakMemoryScope).toBe('estimate');
    const chunked = await model.generate({ prompts: PROMPTS, maxNewTokens: 6, prefillTokenBudget: 1 });
    expect(chunked.results.map((r) => r.tokens)).toEqual(streamed);
  });

  it('stops on a stop token and keeps it as the last token', async () => {
    const free = await model.generate({ prompts: [PROMPTS[1]!], maxNewTokens: 6 });
    const stop = free.results[0]!.tokens[1]!;
    const out = await model.generate({ prompts: [PROMPTS[1]!], maxNewTokens: 6, stopTokens: [stop] });
    expect(out.results[0]!.finishReason).toBe('stop');
    expect(out.results[0]!.tokens.at(-1)).toBe(stop);
    expect(out.results[0]!.tokens.length).toBeLessThanOrEqual(2);
  });

  it('cancels through an AbortSignal', async () => {
    const controller = new AbortController();
    let seen = 0;
    const out = await model.generate({ prompts: [PROMPTS[0]!], maxNewTokens: 3000 }, () => {
      if (++seen === 5) controller.abort();
    }, controller.signal);
    expect(out.results[0]!.finishReason).toBe('cancelled');
    expect(out.results[0]!.tokens.length).toBeLessThan(3000);
    const pre = new AbortController();
    pre.abort();
    const none = await model.generate({ prompts: [PROMPTS[0]!], maxNewTokens: 5 }, undefined, pre.signal);
    expect(none.results[0]).toMatchObject({ finishReason: 'cancelled', tokens: [] });
  });

  it('close() ends running generations as cancelled; later calls throw', async () => {
    const own = await loadModel({ dir: tiny.dir, weights: 'bf16', backend: 'cpu', threads: 1 });
    let seen = 0;
    const running = own.generate({ prompts: [PROMPTS[0]!, PROMPTS[1]!], maxNewTokens: 3000 }, () => {
      if (++seen === 4) own.close();
    });
    const out = await running;
    expect(out.results.map((r) => r.finishReason)).toEqual(['cancelled', 'cancelled']);
    // Tokens reach JS behind the generating thread, which stops at the first step after close().
    for (const r of out.results) {
      expect(r.tokens.length).toBeGreaterThanOrEqual(2);
      expect(r.tokens.length).toBeLessThan(3000);
    }
    expect(() => own.info()).toThrow(/closed/);
    await expect(own.generate({ prompts: [PROMPTS[0]!], maxNewTokens: 2 })).rejects.toThrow(/closed/);
  });

  it('feeds a prompt longer than the prefill budget in chunks, generating the same tokens', async () => {
    const whole = await model.generate({ prompts: PROMPTS, maxNewTokens: 4 });
    const chunked = await model.generate({ prompts: PROMPTS, maxNewTokens: 4, prefillTokenBudget: 2 });
    expect(chunked.results.map((r) => r.tokens)).toEqual(whole.results.map((r) => r.tokens));
    // 11 prompt tokens, 2 a step; the last prompt enters in the sixth step and needs three more.
    expect([whole.stats.prefillSteps, chunked.stats.prefillSteps, chunked.stats.decodeSteps]).toEqual([1, 6, 3]);
  });

  it('rejects bad folders with messages naming the file', async () => {
    await expect(loadModel({ dir: join(root, 'nope'), weights: 'bf16', backend: 'cpu' })).rejects.toThrow(/nope/);
    await expect(loadModel({ dir: tiny.dir, weights: 'int4', backend: 'cpu' })).rejects.toThrow(/qpacked/);
    // Beside the message, the runtime's status, which callers act on.
    await expect(loadModel({ dir: join(root, 'nope'), weights: 'bf16', backend: 'cpu' })).rejects.toMatchObject({ code: 'model_invalid' });
    await expect(loadModel({ dir: tiny.dir, weights: 'int4', backend: 'cpu' })).rejects.toMatchObject({ code: 'model_invalid' });
    const bad = join(root, 'llama');
    execFileSync('cp', ['-r', tiny.dir, bad]);
    const cfg = JSON.parse(readFileSync(join(bad, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(bad, 'config.json'), JSON.stringify({ ...cfg, model_type: 'llama', architectures: ['LlamaForCausalLM'] }));
    await expect(loadModel({ dir: bad, weights: 'bf16', backend: 'cpu' })).rejects.toThrow(/config\.json.*llama/);
    await expect(model.generate({ prompts: [[tiny.config.vocab_size + 3]], maxNewTokens: 2 })).rejects.toThrow(/vocabulary/);
    await expect(model.logits([])).rejects.toMatchObject({ code: 'invalid_request', message: 'logits: no tokens' });
  });

  it('takes only the weights and backend names it knows', () => {
    const raw = loadNativeBinding() as unknown as { loadModel(o: object): Promise<unknown> };
    expect(() => raw.loadModel({ dir: tiny.dir, weights: 'fp8', backend: 'cpu' })).toThrow("loadModel: unknown weights 'fp8' (expected bf16 or int4)");
    expect(() => raw.loadModel({ dir: tiny.dir, weights: 'bf16', backend: 'CPU' })).toThrow("loadModel: unknown backend 'CPU' (expected cpu or cuda)");
  });

  it('says which prompt failed as a number beside the message, not only in it', async () => {
    const bad = tiny.config.vocab_size + 3;
    const failed = await model.generate({ prompts: [[5, 6], [7, bad], []], maxNewTokens: 2 }).then(
      () => undefined,
      (e: unknown) => e as Error & { promptIndex?: number },
    );
    expect(failed?.message).toBe(`generate: prompt 1: token id ${bad} is outside the vocabulary (0..${tiny.config.vocab_size - 1})`);
    expect(failed?.promptIndex).toBe(1);
    expect(isNativeError(failed) && failed.code).toBe('invalid_prompt');
    // A failure that is no prompt's carries none.
    const own = await loadModel({ dir: tiny.dir, weights: 'bf16', backend: 'cpu', threads: 1 });
    own.close();
    const closed = await own.generate({ prompts: [[5]], maxNewTokens: 1 }).then(
      () => undefined,
      (e: unknown) => e as Error & { promptIndex?: number },
    );
    expect(closed).toBeInstanceOf(Error);
    expect(closed?.promptIndex).toBeUndefined();
  });

  it('refuses numbers it would otherwise convert into other values, at both layers', async () => {
    // The TS binding: token ids.
    for (const bad of [1.7, Number.NaN, 2 ** 32 + 5]) {
      await expect(model.generate({ prompts: [[5, bad]], maxNewTokens: 2 })).rejects.toThrow(/prompts\[0\] must hold 32-bit integers/);
      await expect(model.logits([bad])).rejects.toThrow(/tokens must hold 32-bit integers/);
    }
    // The addon itself: options and token arrays.
    const raw = loadNativeBinding() as unknown as {
      loadModel(o: object): Promise<{ generate(r: object, cb?: unknown): { promise: Promise<unknown> }; logits(t: unknown): Promise<unknown>; close(): void }>;
    };
    for (const maxNewTokens of [Number.POSITIVE_INFINITY, Number.NaN, 3e9, 2.5, -1]) {
      const handle = await raw.loadModel({ dir: tiny.dir, weights: 'bf16', backend: 'cpu', threads: 1 });
      try {
        expect(() => handle.generate({ prompts: [Int32Array.from([5])], maxNewTokens })).toThrow(/maxNewTokens must be an integer from 0 to 2147483647/);
        expect(() => handle.logits([5, 1.5])).toThrow(/must hold 32-bit integers/);
      } catch (e) {
        throw new Error(`maxNewTokens ${maxNewTokens}: ${(e as Error).message}`, { cause: e });
      } finally {
        handle.close();
      }
    }
    expect(() => raw.loadModel({ dir: tiny.dir, weights: 'bf16', backend: 'cpu', threads: 1.5 })).toThrow(/threads must be an integer from 0 to 1024/);
  });

  it('refuses to pack into the checkpoint folder itself (its config and index would be replaced)', async () => {
    const before = readFileSync(join(tiny.dir, 'model.safetensors.index.json'), 'utf8');
    await expect(packModel({ src: tiny.dir, dst: join(tiny.dir, '.') })).rejects.toThrow(/is the checkpoint folder itself/);
    expect(readFileSync(join(tiny.dir, 'model.safetensors.index.json'), 'utf8')).toBe(before);
  });

  it('rejects a pack whose source the filesystem cannot read (a symlink loop) instead of ending the process', async () => {
    const src = join(root, 'loop-src');
    execFileSync('cp', ['-r', tiny.dir, src]);
    // Without an index the packer lists the folder's *.safetensors, and the loop fails its file-status call.
    rmSync(join(src, 'model.safetensors.index.json'), { force: true });
    execFileSync('ln', ['-s', 'loop.safetensors', join(src, 'loop.safetensors')]);
    const job = loadNativeBinding().pack({ src, dst: join(root, 'loop-dst') }, () => {});
    await expect(job.promise).rejects.toThrow(/symbolic links/);
  });

  it('survives a worker thread terminated while its generate and its pack run on native threads', () => {
    const workerSrc = `
      b.pack({ src: ${JSON.stringify(tiny.dir)}, dst: ${JSON.stringify(join(root, 'wt-pack'))}, threads: 1 }, () => {});
      const m = await b.loadModel(opts);
      m.generate({ prompts: [Int32Array.from([5, 6, 7])], maxNewTokens: 100000, stopTokens: new Int32Array(0) }, () => parentPort.postMessage('token'));`;
    expect(afterTerminatedWorkers(tiny.dir, workerSrc, 3)).toBe(`alive ${tiny.config.vocab_size}`);
  });

  it('survives a worker thread terminated while its loadModel and logits wait on the libuv pool', () => {
    // The generate holds the model for its whole request, so the logits calls (and the load queued behind them on
    // the pool's four threads) are still running when the worker is terminated: they complete while its
    // environment is torn down, when no JS can run.
    const workerSrc = `
      const m = await b.loadModel(opts);
      let first = true;
      m.generate({ prompts: [Int32Array.from([5, 6, 7])], maxNewTokens: 100000, stopTokens: new Int32Array(0) }, () => {
        if (!first) return;
        first = false;
        for (let i = 0; i < 5; i++) m.logits(Int32Array.from([5, 6, 7]));
        b.loadModel(opts);
        parentPort.postMessage('queued');
      });`;
    expect(afterTerminatedWorkers(tiny.dir, workerSrc, 3)).toBe(`alive ${tiny.config.vocab_size}`);
  });

  it('survives a worker thread terminated while its token callback runs', () => {
    // The callback is busy for 3 ms a token, so the termination stops it mid-call: the call's failure is then an error
    // that cannot be thrown into the stopping JS.
    const workerSrc = `
      const m = await b.loadModel(opts);
      let first = true;
      m.generate({ prompts: [Int32Array.from([5, 6, 7])], maxNewTokens: 100000, stopTokens: new Int32Array(0) }, () => {
        if (first) parentPort.postMessage('streaming');
        first = false;
        const t = Date.now();
        while (Date.now() - t < 3) {}
      });`;
    expect(afterTerminatedWorkers(tiny.dir, workerSrc, 5)).toBe(`alive ${tiny.config.vocab_size}`);
  });

  // RLIMIT_NPROC binds only an unprivileged user, so root runs the script as nobody under a limit of 40 threads
  // (Node needs about a dozen): some of the 64 generate calls find no thread to run on.
  const canLimitThreads = process.platform === 'linux' && process.getuid?.() === 0 && ['/usr/bin/setpriv', '/usr/bin/prlimit'].every((p) => existsSync(p));
  it.skipIf(!canLimitThreads)('turns a generate that gets no native thread into a JS error, and still exits', () => {
    chmodSync(root, 0o755);
    const addon = process.env.HORIZON_NATIVE_ADDON ?? join(REPO, 'native', 'build', 'Release', 'horizon_runtime.node');
    const script = `
      const b = require(${JSON.stringify(addon)});
      (async () => {
        const m = await b.loadModel({ dir: ${JSON.stringify(tiny.dir)}, weights: 'bf16', backend: 'cpu', threads: 1 });
        const jobs = [];
        let error = 'none';
        try {
          for (let i = 0; i < 64; i++) {
            jobs.push(m.generate({ prompts: [Int32Array.from([5, 6, 7])], maxNewTokens: 100000, stopTokens: new Int32Array(0) }, () => {}));
          }
        } catch (e) {
          error = e.message;
        }
        for (const j of jobs) j.cancel();
        await Promise.all(jobs.map((j) => j.promise));
        console.log(JSON.stringify({ error, started: jobs.length }));
      })();`;
    const out = execFileSync(
      '/usr/bin/setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', '/usr/bin/prlimit', '--nproc=40', process.execPath, '-e', script],
      { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const { error, started } = JSON.parse(out.trim()) as { error: string; started: number };
    expect(error).toMatch(/^cannot start a native thread for horizon-generate: /);
    expect(started).toBeGreaterThan(0);
  });

  it('packs with --progress-json, hashes every file in the manifest, and runs int4', async () => {
    const out = join(root, 'packed');
    mkdirSync(out);
    writeFileSync(join(out, 'model-qpacked-00002-of-00003.safetensors'), 'stale shard of an earlier pack');
    const stdout = execFileSync(process.execPath, [CLI, 'pack', '--model', tiny.dir, '--out', out, '--progress-json', '--repo', 'x/y', '--revision', 'abc'], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; phase?: string; doneBytes?: number; totalBytes?: number });
    expect(lines.at(-1)).toMatchObject({ type: 'done', groupSize: 32 });
    expect(lines.some((l) => l.type === 'progress' && l.phase === 'pack')).toBe(true);
    const lastHash = lines.filter((l) => l.phase === 'hash').at(-1)!;
    expect(lastHash.doneBytes).toBe(lastHash.totalBytes);
    const manifest = JSON.parse(readFileSync(join(out, 'horizon-manifest.json'), 'utf8')) as PackManifest;
    expect(manifest).toMatchObject({ format: 'qpacked-v2', group_size: 32, tool: 'horizon-runmap', source: { repo: 'x/y', revision: 'abc' } });
    const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
    for (const f of manifest.outputs) expect(f.sha256, f.path).toBe(sha(join(out, f.path)));
    for (const f of manifest.source.files) expect(f.sha256, f.path).toBe(sha(join(tiny.dir, f.path)));
    expect(manifest.outputs.map((f) => f.path).sort()).toEqual(expect.arrayContaining(['config.json', 'model-qpacked-00001-of-00001.safetensors', 'model.safetensors.index.json']));
    expect(manifest.source.files.map((f) => f.path)).toEqual(expect.arrayContaining(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']));

    expect(existsSync(join(out, 'model-qpacked-00002-of-00003.safetensors'))).toBe(false);

    const q = await loadModel({ dir: out, weights: 'int4', backend: 'cpu', threads: 2 });
    try {
      expect(q.info()).toMatchObject({ backend: 'cpu', weights: 'int4', groupSize: 32 });
      const res = await q.generate({ prompts: [PROMPTS[0]!], maxNewTokens: 4 });
      expect(res.results[0]!.tokens).toHaveLength(4);
    } finally {
      q.close();
    }
    expect(() => q.info()).toThrow(/closed/);
  });
});
