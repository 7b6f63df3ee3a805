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
  /**
   * Device memory a loaded model holds on the first device: while one is loaded, the probe reports that much less
   * free (as the driver would) and the model reports holding it.
   */
  readonly loadedDeviceBytes?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createScriptedEngine(options: ScriptedEngineOptions = {}): InferenceEngine {
  const reply = options.reply ?? ((ids) => `echo ${ids.length}`);
  const held = options.loadedDeviceBytes ?? 0;
  const first = options.devices?.[0];
  let loadedModels = 0;
  return {
    probe: () =>
      first
        ? {
            label: `CUDA: ${first.name}`,
            cudaCompiled: true,
            devices: (options.devices ?? []).map((d) =>
              d === first ? { ...d, freeVramBytes: d.freeVramBytes - held * loadedModels } : d,
            ),
            note: '',
            cpuIsa: 'avx2',
          }
        : { label: 'CPU', cudaCompiled: false, devices: [], note: 'scripted engine', cpuIsa: 'avx2' },
    async load({ modelDir, maxContext = 4096 }) {
      const crash = modelDir.includes('crash-on-generate');
      let disposed = false;
      loadedModels += 1;
      return {
        backend: 'cpu',
        deviceLabel: 'CPU',
        residency: 'host',
        vocabSize: 261,
        maxContext,
        async generate(prompts, policy, onToken, signal) {
          // As the native runtime: prompts start in order while fewer than policy.batch generate, each step
          // gives every active prompt one token, and a prompt's last token comes with its finished result.
          const scripts = prompts.map((p) => [...Buffer.from(reply(p), 'utf8')]);
          const out = prompts.map(() => ({ tokenIds: [] as number[], reason: null as 'stop' | 'length' | 'cancelled' | null, ttft: -1, start: 0 }));
          const limit = Math.max(1, Math.min(policy.batch ?? prompts.length, prompts.length));
          const active: number[] = [];
          let next = 0;
          const result = (i: number) => {
            const o = out[i]!;
            return { tokenIds: o.tokenIds, finishReason: o.reason ?? 'cancelled', ttftMs: o.ttft, decodeTokensPerSecond: 1000 };
          };
          for (;;) {
            while (active.length < limit && next < prompts.length) {
              out[next]!.start = performance.now();
              active.push(next++);
            }
            if (active.length === 0) break;
            if (crash) process.kill(process.pid, 'SIGKILL');
            if (signal.aborted) break;
            if (options.tokenDelayMs) await sleep(options.tokenDelayMs);
            for (const i of [...active]) {
              const o = out[i]!;
              const tok = scripts[i]?.[o.tokenIds.length] ?? EOS_ID;
              if (o.ttft < 0) o.ttft = performance.now() - o.start;
              if (policy.stopTokenIds.includes(tok)) {
                o.reason = 'stop';
              } else {
                o.tokenIds.push(tok);
                // As the native runtime: a sequence whose KV room is full ends with 'length'.
                const full = (prompts[i]?.length ?? 0) + o.tokenIds.length >= maxContext;
                if (full || o.tokenIds.length >= policy.maxNewTokens) o.reason = 'length';
              }
              if (o.reason) active.splice(active.indexOf(i), 1);
              onToken(i, tok, o.reason ? result(i) : undefined);
            }
          }
          for (const o of out) o.reason ??= 'cancelled';
          return { items: out.map((_, i) => result(i)), peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 };
        },
        fault: () => '',
        deviceMemory: () => (first && held > 0 && !disposed ? { device: first.index, bytes: held } : null),
        dispose() {
          if (!disposed) loadedModels -= 1;
          disposed = true;
        },
      };
    },
  };
}
