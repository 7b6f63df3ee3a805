/** The steps of a preparation, in order. */
export type PrepPhase = 'resolve' | 'download' | 'pack' | 'manifest';

/** Events `prepareModel` emits; `progress` carries overall bytes for the phase plus the current file. */
export type PrepEvent =
  | { readonly type: 'phase'; readonly phase: PrepPhase; readonly message: string }
  | {
      readonly type: 'resolved';
      readonly repo: string;
      readonly commit: string;
      readonly files: readonly { path: string; size: number }[];
      readonly totalBytes: number;
    }
  | {
      readonly type: 'progress';
      readonly phase: 'download' | 'verify' | 'pack' | 'hash';
      /** The repo path being transferred or verified, when the phase is per file: the one this event reports on. */
      readonly file?: string;
      /** Every file being transferred or verified, when there are several at once (in order of start). */
      readonly files?: readonly string[];
      readonly fileDoneBytes?: number;
      readonly fileTotalBytes?: number;
      readonly doneBytes: number;
      readonly totalBytes: number;
      /** Moving average over the last few seconds, bytes per second. */
      readonly bytesPerSec: number;
      /** Seconds left at the current rate; null until a rate is known. */
      readonly etaSec: number | null;
    }
  | {
      readonly type: 'file';
      readonly path: string;
      /** Where the verified bytes came from. */
      readonly source: 'download' | 'hf-cache' | 'existing';
      readonly size: number;
      readonly sha256: string;
    }
  | { readonly type: 'retry'; readonly file: string; readonly attempt: number; readonly delayMs: number; readonly reason: string }
  | { readonly type: 'warning'; readonly message: string }
  | { readonly type: 'done'; readonly manifestPath: string; readonly modelDir: string; readonly packedDir: string | null };

/** Tracks bytes over a sliding window to give a rate and an ETA. */
export class RateMeter {
  private readonly samples: { t: number; bytes: number }[] = [];

  constructor(
    private readonly windowMs = 5000,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Records the cumulative byte count and returns the rate (bytes/s) and ETA (s) toward `total`. */
  sample(doneBytes: number, totalBytes: number): { bytesPerSec: number; etaSec: number | null } {
    const t = this.now();
    this.samples.push({ t, bytes: doneBytes });
    while (this.samples.length > 2 && t - this.samples[0]!.t > this.windowMs) this.samples.shift();
    const first = this.samples[0]!;
    const dt = (t - first.t) / 1000;
    const bytesPerSec = dt > 0 ? Math.max(0, (doneBytes - first.bytes) / dt) : 0;
    const etaSec = bytesPerSec > 0 ? Math.max(0, (totalBytes - doneBytes) / bytesPerSec) : null;
    return { bytesPerSec, etaSec };
  }
}
