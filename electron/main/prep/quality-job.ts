/**
 * The INT4-vs-BF16 quality check as a job of the app: `horizon quality --progress-json` in the packer's kind of child
 * process (a Node child, or an Electron utilityProcess), its progress relayed, its report stored by the CLI.
 */
import type { PackerLauncher } from './pack-model.js';
import { commandPacker, defaultPackerCommand, runCliChild } from './pack-model.js';
import { PrepError } from './prep-error.js';

export interface QualityJobProgress {
  readonly done: number;
  readonly total: number;
  readonly etaSeconds: number | null;
}

export async function runQualityJob(opts: {
  /** A prepared model folder with both its BF16 source and an INT4 pack. */
  readonly modelDir: string;
  readonly dataDir: string;
  readonly limit: number;
  readonly launcher?: PackerLauncher;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: QualityJobProgress) => void;
}): Promise<void> {
  const launch = opts.launcher ?? commandPacker(defaultPackerCommand());
  const args = ['quality', '--model', opts.modelDir, '--limit', String(opts.limit), '--data-dir', opts.dataDir, '--progress-json'];
  if (opts.signal?.aborted) throw new PrepError('CANCELLED', `quality check of ${opts.modelDir}: cancelled`);
  let end;
  try {
    end = await runCliChild(launch, args, {
      signal: opts.signal,
      onMessage: (msg) => {
        if (msg.type !== 'progress') return;
        opts.onProgress?.({
          done: Number(msg.done) || 0,
          total: Number(msg.total) || 0,
          etaSeconds: typeof msg.etaMs === 'number' ? Math.ceil(msg.etaMs / 1000) : null,
        });
      },
    });
  } catch (error) {
    throw new PrepError('INTERNAL', `quality check: cannot run it: ${(error as Error).message}`, { cause: error });
  }
  const { code, signalName, sawDone, stderrTail } = end;
  if (opts.signal?.aborted) throw new PrepError('CANCELLED', `quality check of ${opts.modelDir}: cancelled`);
  if (code !== 0 || !sawDone) {
    const last = stderrTail.trim().split('\n').filter((l) => !l.startsWith('quality: ')).pop() ?? '';
    throw new PrepError('INTERNAL', `quality check of ${opts.modelDir} failed (exit ${code ?? signalName})${last ? `: ${last.replace(/^horizon quality: /, '')}` : ''}`);
  }
}
