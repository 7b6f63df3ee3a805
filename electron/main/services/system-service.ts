import os from 'node:os';

import type { AssetStatus, PickPathRequest, PickPathResult, SystemApi, SystemInfo } from '../../common/ipc-contract.js';
import { err, ok, type Result } from '../../common/result.js';
import { freeBytes } from '../prep/disk-space.js';
import { evalAssetsStatus } from '../prep/eval-assets.js';
import type { WorkerClient } from '../worker-client.js';
import { toResult } from './service-result.js';

export interface SystemServiceOptions {
  readonly worker: Pick<WorkerClient, 'request' | 'state' | 'restart'>;
  readonly dataDir: string;
  readonly hubUrl: string;
  readonly appVersion: string;
  /** Opens a native file dialog (the Electron shell provides it); absent in `horizon serve` and tests. */
  readonly pickPath?: (req: PickPathRequest) => Promise<string | null>;
}

/** The CPU backend's kernel path as the CPU row names it (as a run's residency label does), after a comma. */
function cpuKernels(isa: string): string {
  if (isa === '') return '';
  return isa === 'scalar' ? ', scalar kernels' : `, ${isa.toUpperCase()}`;
}

/** Device probe (through the runtime worker), host facts and the eval assets' state. */
export class SystemService implements SystemApi {
  constructor(private readonly opts: SystemServiceOptions) {}

  check(): Promise<Result<SystemInfo>> {
    return toResult(async () => {
      if (this.opts.worker.state === 'crashed') await this.opts.worker.restart();
      const probe = await this.opts.worker.request({ type: 'probe' });
      const assets = await evalAssetsStatus(this.opts.dataDir);
      const cpus = os.cpus();
      const gpus = probe.ok
        ? probe.value.devices.map((d) => ({
            index: d.index,
            name: d.name,
            totalMemoryBytes: d.vramBytes,
            freeMemoryBytes: d.freeVramBytes,
            driverVersion: d.driverVersion,
            computeCapability: d.computeCapability,
          }))
        : [];
      const first = gpus[0];
      const cudaStatus = !probe.ok ? `runtime worker: ${probe.error.message}` : first ? '' : probe.value.note;
      const assetRows: AssetStatus[] = [
        {
          kind: 'ifeval',
          ready: assets.ifeval.ready,
          path: assets.ifeval.path,
          detail: assets.ifeval.ready ? '541 prompts, sha256 ok' : 'missing or not the pinned input_data.jsonl',
        },
        {
          kind: 'punkt',
          ready: assets.punkt.ready,
          path: assets.punkt.dir,
          detail: assets.punkt.ready ? 'Punkt English parameters, sha256 ok' : `missing or changed: ${assets.punkt.missing.join(', ')}`,
        },
      ];
      return {
        backend: first ? 'cuda' : 'cpu',
        backendLabel: first
          ? `CUDA: ${first.name}, ${(first.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB`
          : `CPU backend (${cudaStatus || 'no CUDA device'})`,
        gpus,
        cudaStatus,
        cpuLabel: `${cpus[0]?.model.trim() ?? 'unknown CPU'} (${cpus.length} threads${cpuKernels(probe.ok ? probe.value.cpuIsa : '')})`,
        memoryBytes: os.totalmem(),
        dataDir: this.opts.dataDir,
        hubUrl: this.opts.hubUrl,
        appVersion: this.opts.appVersion,
        dataDirFreeBytes: await freeBytes(this.opts.dataDir).catch(() => null),
        assets: assetRows,
        nativeDialogs: this.opts.pickPath !== undefined,
      };
    });
  }

  async pickPath(req: PickPathRequest): Promise<Result<PickPathResult>> {
    if (!this.opts.pickPath) return err('BAD_INPUT', 'file dialogs exist only in the desktop app; type the path instead');
    try {
      return ok({ path: await this.opts.pickPath(req) });
    } catch (e) {
      return err('INTERNAL', `file dialog failed: ${(e as Error).message}`);
    }
  }
}
