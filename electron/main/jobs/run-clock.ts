/**
 * A run's generating time over its sessions. Elapsed is what earlier sessions stored plus this session's: measured
 * from its first generated request until the session ends, then what it stored (so that the last event says what the
 * figures say). Each stored response carries the time since the one stored before it, so a killed run keeps its time.
 */
export class RunClock {
  private since: number | null = null;
  private stored = 0;
  private ended: number | null = null;
  private tokens = 0;

  /** `priorMs`: the generating time earlier sessions stored. */
  constructor(
    private readonly priorMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Generating begins (the session's first request to the worker). */
  start(): void {
    this.since = this.now();
  }

  /** Whether this session has begun generating. */
  get started(): boolean {
    return this.since !== null;
  }

  /** A generated token that counts (a stop token does not). */
  countToken(): void {
    this.tokens += 1;
  }

  /** Generating time not yet stored with a response, in ms. */
  unstoredMs(): number {
    return this.since === null ? 0 : Math.max(0, this.now() - this.since - this.stored);
  }

  /** `ms` of the unstored time was stored (with a response); only stored time counts as such. */
  markStored(ms: number): void {
    this.stored += ms;
  }

  /** The unstored time, handed to whoever stores it now (the job's figures at its end). */
  takeUnstoredMs(): number {
    const ms = this.unstoredMs();
    this.stored += ms;
    return ms;
  }

  /** Of a job's wall time as the worker measured it, the part no response stored yet. */
  unstoredOf(jobWallMs: number): number {
    return Math.max(0, jobWallMs - this.stored);
  }

  /** The session ended having stored `storedTotalMs` for the whole run (earlier sessions included). */
  end(storedTotalMs: number): void {
    if (this.since !== null) this.ended = Math.max(0, storedTotalMs - this.priorMs);
  }

  private sessionMs(): number {
    return this.ended ?? (this.since === null ? 0 : this.now() - this.since);
  }

  /** The whole run's generating time, seconds. */
  elapsedSeconds(): number {
    return (this.priorMs + this.sessionMs()) / 1000;
  }

  /** This session's generated tokens over its generating time; null before its first token. */
  tokensPerSecond(): number | null {
    const ms = this.sessionMs();
    return this.tokens > 0 && ms > 0 ? this.tokens / (ms / 1000) : null;
  }

  /** Seconds since this session began generating (for the ETA), null before. */
  generatingSeconds(): number | null {
    return this.since === null ? null : (this.now() - this.since) / 1000;
  }
}
