import type { BackendChoice, DeviceProbe, PromptGeneration } from '../../common/worker-protocol.js';
import { deviceProblem, probedDevice } from '../../common/worker-protocol.js';
import { loadModel, loadNativeBinding } from './binding.js';
import type { BackendKind, GenerateResult, NativeModelInfo } from './binding.js';
import type { EngineModel, InferenceEngine } from './inference-engine.js';

/** A CUDA driver API version as people write it ("12.8"), 'unknown' for 0. */
export function driverString(v: number): string {
  // CUDA encodes the driver API version as 1000 * major + 10 * minor.
  return v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : 'unknown';
}

/** Reports the CUDA devices, or "CPU" with the reason when none is usable. */
export function probeNativeDevices(): DeviceProbe {
  const probe = loadNativeBinding().probeDevices();
  const devices = probe.devices.map((d) => ({
    index: d.index,
    name: d.name,
    vramBytes: d.totalMemoryBytes,
    freeVramBytes: d.freeMemoryBytes,
    driverVersion: driverString(d.driverVersion),
    computeCapability: d.computeCapability,
  }));
  const first = devices[0];
  return {
    label: first ? `CUDA: ${first.name}` : 'CPU',
    cudaCompiled: probe.cudaCompiled,
    devices,
    note: first ? '' : probe.error || (probe.cudaCompiled ? 'no CUDA device found' : 'built without CUDA'),
    cpuIsa: probe.cpuIsa,
  };
}

/** The backend a load runs on, and for CUDA the probed device it asked for (the first when none was named). */
export function pickBackend(
  choice: BackendChoice,
  probe: DeviceProbe,
  cudaDevice?: number,
): { kind: BackendKind; device?: DeviceProbe['devices'][number] } {
  const problem = deviceProblem(probe, choice, cudaDevice);
  if (problem?.kind === 'no-cuda') throw new Error(`the CUDA backend was asked for but is not usable: ${problem.note}`);
  if (problem?.kind === 'no-such-device') {
    const found = problem.devices.map((d) => `${d.index}: ${d.name}`).join(', ');
    throw new Error(`CUDA device ${problem.device} was asked for but is not among the devices found (${found})`);
  }
  const device = choice === 'cpu' ? undefined : probedDevice(probe, cudaDevice);
  return device ? { kind: 'cuda', device } : { kind: 'cpu' };
}

/** Where the weights live, as the runtime reports it (never a guess from the device's size). */
export function residencyLabel(info: Pick<NativeModelInfo, 'backend' | 'weights' | 'numExperts' | 'deviceExpertSlots' | 'threads' | 'simd' | 'cpuIsa'>): string {
  if (info.backend !== 'cuda') {
    const isa = info.cpuIsa && info.cpuIsa !== 'scalar' ? info.cpuIsa.toUpperCase() : info.simd ? 'AVX2' : '';
    return `host memory, ${info.threads} threads${isa ? `, ${isa}` : ''}`;
  }
  if (info.deviceExpertSlots >= info.numExperts) return `all ${info.numExperts} ${info.weights} experts of every layer resident on the GPU`;
  return (
    `${info.deviceExpertSlots} of ${info.numExperts} ${info.weights} experts per layer cached on the GPU, ` +
    'the rest copied from pinned host memory on demand'
  );
}

function engineItem(r: GenerateResult): PromptGeneration {
  return {
    // The runtime includes the stop token in `tokens`; results exclude it.
    tokenIds: r.finishReason === 'stop' ? r.tokens.slice(0, -1) : r.tokens,
    finishReason: r.finishReason,
    ttftMs: r.tokens.length > 0 ? r.ttftMs : -1,
    decodeTokensPerSecond: r.decodeTokensPerSecond,
  };
}

/** The native addon behind the worker's engine interface. */
export function createNativeEngine(): InferenceEngine {
  return {
    probe: probeNativeDevices,
    async load({ modelDir, packedDir, weights, backend, maxContext, maxSequences, expertBudgetBytes, cudaDevice }): Promise<EngineModel> {
      const probe = probeNativeDevices();
      const { kind, device } = pickBackend(backend, probe, cudaDevice);
      const dir = weights === 'int4' ? packedDir : modelDir;
      if (!dir) throw new Error(`${modelDir}: int4 weights need the packed folder`);
      const model = await loadModel({
        dir, weights, backend: kind,
        ...(maxContext !== undefined ? { maxContext } : {}),
        ...(maxSequences !== undefined ? { maxSequences } : {}),
        ...(expertBudgetBytes !== undefined ? { expertBudget: expertBudgetBytes } : {}),
        ...(device ? { device: device.index } : {}),
      });
      const info = model.info();
      // The fault when disposed: a load or unload can dispose the model while a generate job still runs on it, and
      // the job's error must not turn into "the model is closed".
      let faultWhenClosed: string | null = null;
      return {
        backend: kind,
        deviceLabel: kind === 'cuda' && device ? `${device.name} (${(device.vramBytes / 2 ** 30).toFixed(1)} GiB)` : 'CPU',
        residency: residencyLabel(info),
        vocabSize: info.vocabSize,
        maxContext: info.maxContext,
        async generate(prompts, policy, onToken, signal) {
          const out = await model.generate(
            {
              prompts, maxNewTokens: policy.maxNewTokens, stopTokens: policy.stopTokenIds,
              ...(policy.batch !== undefined ? { batch: policy.batch } : {}),
            },
            (index, token, end) => onToken(index, token, end ? engineItem(end) : undefined),
            signal,
          );
          return {
            items: out.results.map(engineItem),
            peakMemoryBytes: kind === 'cuda' ? out.stats.peakMemoryBytes : 0,
            peakMemoryScope: kind === 'cuda' ? (out.stats.peakMemoryScope === 'process' ? 'process' : 'device') : null,
            h2dBytes: out.stats.h2dBytes,
            expertCache:
              kind === 'cuda' ? { hits: out.stats.expertHits, misses: out.stats.expertMisses, evictions: out.stats.expertEvictions ?? 0 } : null,
          };
        },
        fault: () => faultWhenClosed ?? model.info().fault,
        deviceMemory: () => (kind === 'cuda' && faultWhenClosed === null ? { device: info.device, bytes: model.info().deviceBytes } : null),
        dispose: () => {
          if (faultWhenClosed !== null) return;
          faultWhenClosed = model.info().fault;
          model.close();
        },
      };
    },
  };
}
