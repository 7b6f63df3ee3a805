/**
 * Test helper: an InferenceEngine without weights. Each prompt "generates" the bytes of `reply(promptIds)`
 * one token at a time, then EOS; a model dir named `*crash-on-generate*` kills the process mid-batch.
 */
import type { DeviceProbe } from '../../../../electron/common/worker-protocol.js';
import type { InferenceEngine } from '../../../../electron/worker/runtime/inference-engine.js';
import { EOS_ID } from './tiny-tokenizer.js';

export interface ScriptedEngineOptions {
  /** Milliseconds between tokens. */
  readonly tokenDelayMs?: number;
  /** The generated text for a prompt, from its token ids (default: "echo <n>" with n prompt tokens). */
  readonly reply?: (promptIds: readonly number[]) => string;
  /** CUDA devices the probe reports (none by default); generation still runs on this scripted CPU engine. */
  readonly devices?: DeviceProbe['devices'];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createScriptedEngine(options: ScriptedEngineOptions = {}): InferenceEngine {
  const reply = options.reply ?? ((ids) => `echo ${ids.length}`);
  return {
    probe: () =>
      options.devices?.length
        ? { label: `CUDA: ${options.devices[0]?.name ?? ''}`, cudaCompiled: true, devices: options.devices, note: '' }
        : { label: 'CPU', cudaCompiled: false, devices: [], note: 'scripted engine' },
    async load({ modelDir, maxContext = 4096 }) {
      const crash = modelDir.includes('crash-on-generate');
      return {
        backend: 'CPU',
        deviceLabel: 'CPU',
        residency: 'host',
        vocabSize: 261,
        maxContext,
        async generate(prompts, policy, onToken, signal) {
          const scripts = prompts.map((p) => [...Buffer.from(reply(p), 'utf8')]);
          const out = prompts.map(() => ({ tokenIds: [] as number[], done: false, reason: 'length' as 'stop' | 'length' | 'cancelled', ttft: -1 }));
          const t0 = performance.now();
          for (let step = 0; step < policy.maxNewTokens && out.some((o) => !o.done); step++) {
            if (crash) process.kill(process.pid, 'SIGKILL');
            if (signal.aborted) {
              for (const o of out) if (!o.done) Object.assign(o, { done: true, reason: 'cancelled' });
              break;
            }
            if (options.tokenDelayMs) await sleep(options.tokenDelayMs);
            out.forEach((o, i) => {
              if (o.done) return;
              // As the native runtime: a sequence whose KV room is full ends with 'length'.
              if ((prompts[i]?.length ?? 0) + o.tokenIds.length >= maxContext) {
                Object.assign(o, { done: true, reason: 'length' });
                return;
              }
              const tok = scripts[i]?.[step] ?? EOS_ID;
              if (o.ttft < 0) o.ttft = performance.now() - t0;
              if (policy.stopTokenIds.includes(tok)) {
                Object.assign(o, { done: true, reason: 'stop' });
                return;
              }
              o.tokenIds.push(tok);
              onToken(i, tok);
            });
          }
          return {
            items: out.map((o) => ({
              tokenIds: o.tokenIds,
              finishReason: o.done ? o.reason : 'length',
              ttftMs: o.ttft,
              decodeTokensPerSecond: 1000,
            })),
            peakVramBytes: 0,
            h2dBytes: 0,
          };
        },
        fault: () => '',
        dispose() {},
      };
    },
  };
}
