import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { renameDurably, writeFileAtomic } from '../../node/atomic-write.js';
import { FileHasher, type FileDigest } from '../../node/file-hasher.js';
import { gatedRepoError, PrepError, toPrepError } from './prep-error.js';

/** What the downloaded bytes must be; a missing hash is not checked, a missing size is taken from the response. */
export type ExpectedFile = { readonly size?: number; readonly sha256?: string; readonly gitSha1?: string };

export type DownloadFileOptions = {
  readonly url: string;
  /** Final path; bytes go to `<dest>.part` (with a `<dest>.part.json` sidecar) and are renamed only once verified. */
  readonly dest: string;
  readonly expected: ExpectedFile;
  /** Names the file in errors and events (e.g. the repo path). */
  readonly label: string;
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
  /** Bytes of the file present so far (resumed bytes included), called as they arrive. */
  readonly onBytes?: (doneBytes: number, totalBytes: number) => void;
  /** Called before waiting to retry after a network failure. */
  readonly onRetry?: (attempt: number, delayMs: number, reason: string) => void;
  /** Consecutive failed attempts without progress before giving up (default 5). */
  readonly retries?: number;
  /** First backoff delay in ms, doubled per failure, capped at 30 s (default 1000). */
  readonly backoffMs?: number;
  readonly fetch?: typeof fetch;
  /** An attempt that receives no bytes for this long is dropped and retried (default 60 s). */
  readonly stallMs?: number;
};

type Sidecar = { url: string; size: number | null; sha256: string | null; gitSha1: string | null; etag: string | null };

const sidecarPath = (dest: string): string => `${dest}.part.json`;
const partPath = (dest: string): string => `${dest}.part`;

async function readSidecar(dest: string): Promise<Sidecar | undefined> {
  try {
    return JSON.parse(await fs.promises.readFile(sidecarPath(dest), 'utf8')) as Sidecar;
  } catch {
    return undefined;
  }
}

async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(value));
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.promises.stat(file)).size;
  } catch {
    return 0;
  }
}

const stripEtag = (etag: string | null): string | null => (etag ? etag.replace(/^W\//, '').replace(/"/g, '') : null);

class RetryableError extends Error {}

class StallError extends RetryableError {
  constructor(ms: number) {
    super(`no data for ${Math.round(ms / 1000)} s`);
  }
}

function httpError(status: number, label: string, url: string, authed: boolean): PrepError | RetryableError {
  if (status === 401 || status === 403) {
    return gatedRepoError(label, status, authed);
  }
  if (status === 404) return new PrepError('NOT_FOUND', `${label}: not found at ${url} (HTTP 404)`);
  if (status === 429 || status >= 500) return new RetryableError(`HTTP ${status}`);
  return new PrepError('NETWORK', `${label}: unexpected HTTP ${status} from ${url}`);
}

/** Destinations being downloaded by this process: two writers appending to one `.part` would corrupt it. */
const downloading = new Set<string>();

/**
 * Downloads one file with HTTP Range resume from `<dest>.part`, hashing while streaming, retrying network failures
 * and answers of another size than the expected one with exponential backoff; verifies size and hashes, then renames
 * into place. On a hash mismatch the part is deleted; an answer that cannot be this file leaves it alone.
 * A second download of the same destination while one runs in this process is refused.
 */
export async function downloadFile(opts: DownloadFileOptions): Promise<FileDigest> {
  const key = path.resolve(opts.dest);
  if (downloading.has(key)) {
    throw new PrepError('BAD_INPUT', `${opts.label}: already being downloaded to ${opts.dest}; wait for that download to finish`);
  }
  downloading.add(key);
  try {
    return await downloadOnce(opts);
  } finally {
    downloading.delete(key);
  }
}

async function downloadOnce(opts: DownloadFileOptions): Promise<FileDigest> {
  const { dest, label, expected, signal } = opts;
  const doFetch = opts.fetch ?? fetch;
  const maxRetries = opts.retries ?? 5;
  const backoff = opts.backoffMs ?? 1000;
  const stallMs = opts.stallMs ?? 60_000;
  const part = partPath(dest);
  try {
    await fs.promises.mkdir(path.dirname(dest), { recursive: true });
    const wanted: Sidecar = {
      url: opts.url,
      size: expected.size ?? null,
      sha256: expected.sha256 ?? null,
      gitSha1: expected.gitSha1 ?? null,
      etag: null,
    };
    const old = await readSidecar(dest);
    const sameTarget =
      old !== undefined &&
      old.size === wanted.size &&
      old.sha256 === wanted.sha256 &&
      old.gitSha1 === wanted.gitSha1 &&
      (wanted.sha256 !== null || wanted.gitSha1 !== null || old.url === wanted.url);
    let sidecar: Sidecar = sameTarget ? { ...wanted, etag: old.etag } : wanted;
    if (!sameTarget) await fs.promises.rm(part, { force: true });
    await writeJsonAtomic(sidecarPath(dest), sidecar);

    // An empty file needs no request, but it still goes through `.part`, the hash check and the rename.
    await (await fs.promises.open(part, 'a')).close();
    let total = expected.size;
    let offset = await sizeOf(part);
    if (total !== undefined && offset > total) {
      await fs.promises.truncate(part, 0);
      offset = 0;
    }
    let hasher = new FileHasher(expected.gitSha1 !== undefined ? expected.size : undefined);
    let rehashed = 0;
    await hasher.updateFromFile(part, offset, (n) => opts.onBytes?.((rehashed += n), total ?? 0), signal);
    opts.onBytes?.(offset, total ?? 0);

    let failures = 0;
    // Failures are forgiven only for bytes beyond any offset reached before: a server that keeps restarting the file
    // (ignoring Range) and dropping the connection must run out of retries, not loop for ever.
    let furthest = offset;
    while (total === undefined || offset < total) {
      try {
        // Identity encoding keeps byte offsets meaningful for Range and Content-Length.
        const headers: Record<string, string> = { 'Accept-Encoding': 'identity', ...opts.headers };
        if (offset > 0) headers.Range = `bytes=${offset}-`;
        const attempt = new AbortController();
        const watchdog = setTimeout(() => attempt.abort(new StallError(stallMs)), stallMs);
        const kick = (): void => void watchdog.refresh();
        const attemptSignal = signal ? AbortSignal.any([signal, attempt.signal]) : attempt.signal;
        try {
          const res = await doFetch(opts.url, { headers, signal: attemptSignal, redirect: 'follow' });
          if (res.status === 416 && offset > 0) {
            await res.body?.cancel();
            await fs.promises.truncate(part, 0);
            offset = 0;
            hasher = new FileHasher(expected.gitSha1 !== undefined ? expected.size : undefined);
            throw new RetryableError('HTTP 416 for the resume offset; restarting the file');
          }
          if (res.status !== 200 && res.status !== 206) {
            await res.body?.cancel();
            throw httpError(res.status, label, opts.url, headers.Authorization !== undefined);
          }
          const etag = stripEtag(res.headers.get('etag'));
          let restart = res.status === 200 && offset > 0;
          let announced: number | undefined;
          if (res.status === 206) {
            const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.headers.get('content-range') ?? '');
            if (!m || Number(m[1]) !== offset) restart = true;
            if (m && m[3] !== '*') announced = Number(m[3]);
          } else {
            const len = res.headers.get('content-length');
            const encoding = res.headers.get('content-encoding');
            if (len !== null && (!encoding || encoding === 'identity')) announced = Number(len);
          }
          if (announced !== undefined && total !== undefined && announced !== total) {
            // The size is pinned, so this answer is not the file (a captive portal, a proxy's error page, another
            // cached object); the partial download stays for the next answer.
            await res.body?.cancel();
            const type = res.headers.get('content-type');
            throw new RetryableError(`the server answered HTTP ${res.status}${type ? ` (${type})` : ''} for a file of ${announced} bytes, expected ${total}`);
          }
          total ??= announced;
          // Pinned hashes are checked at the end anyway; an ETag change only matters for unpinned files.
          const pinned = expected.sha256 !== undefined || expected.gitSha1 !== undefined;
          if (!pinned && offset > 0 && sidecar.etag !== null && etag !== null && etag !== sidecar.etag) restart = true;
          if (restart) {
            if (res.status !== 200) {
              await res.body?.cancel();
              await fs.promises.truncate(part, 0);
              offset = 0;
              hasher = new FileHasher(expected.gitSha1 !== undefined ? expected.size : undefined);
              throw new RetryableError('the server answered the resume with another range; restarting the file');
            }
            await fs.promises.truncate(part, 0);
            offset = 0;
            hasher = new FileHasher(expected.gitSha1 !== undefined ? expected.size : undefined);
          }
          if (etag !== sidecar.etag) {
            sidecar = { ...sidecar, etag };
            await writeJsonAtomic(sidecarPath(dest), sidecar);
          }
          if (!res.body) throw new RetryableError('empty response body');
          const fh = await fs.promises.open(part, 'a');
          try {
            for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
              if (total !== undefined && offset + chunk.length > total) {
                throw new PrepError('HASH_MISMATCH', `${label}: the server sent more than the expected ${total} bytes`);
              }
              kick();
              hasher.update(chunk);
              // A write may take only part of the chunk (a disk filling up does that); the rest is written after it,
              // and a write that takes nothing fails.
              for (let written = 0; written < chunk.length; ) {
                const { bytesWritten } = await fh.write(chunk, written, chunk.length - written);
                if (bytesWritten <= 0) {
                  throw new PrepError('DISK_FULL', `${label}: nothing more could be written to ${part}; free some space and start again`);
                }
                written += bytesWritten;
              }
              offset += chunk.length;
              opts.onBytes?.(offset, total ?? offset);
            }
            // On disk before it can be renamed into place: a power loss must not leave a verified name on unwritten bytes.
            if (total !== undefined && offset === total) await fh.sync();
          } finally {
            await fh.close();
          }
          if (total === undefined) total = offset;
          if (offset < total) throw new RetryableError(`connection closed after ${offset} of ${total} bytes`);
        } catch (error) {
          throw attempt.signal.aborted && !signal?.aborted ? attempt.signal.reason : error;
        } finally {
          clearTimeout(watchdog);
        }
      } catch (error) {
        if (signal?.aborted) throw new PrepError('CANCELLED', `${label}: download cancelled (the partial file is kept for resuming)`);
        if (error instanceof PrepError) throw error;
        const errno = (error as NodeJS.ErrnoException).code;
        if (errno && /^E(NOSPC|DQUOT|ACCES|PERM|ROFS)$/.test(errno)) throw toPrepError(error, dest);
        if (offset > furthest) {
          furthest = offset;
          failures = 0;
        }
        failures += 1;
        const reason = describeNetworkError(error);
        if (failures > maxRetries) {
          throw new PrepError(
            'NETWORK',
            `${label}: network error after ${maxRetries} retries (${reason}); ${offset} bytes are kept and the next start resumes from there`,
            { cause: error },
          );
        }
        const delay = Math.min(backoff * 2 ** (failures - 1), 30_000);
        opts.onRetry?.(failures, delay, reason);
        try {
          await sleep(delay, undefined, signal ? { signal } : {});
        } catch {
          throw new PrepError('CANCELLED', `${label}: download cancelled (the partial file is kept for resuming)`);
        }
        offset = await sizeOf(part);
      }
    }

    const digest = hasher.digest();
    const problem =
      expected.size !== undefined && digest.size !== expected.size
        ? `size ${digest.size} bytes, expected ${expected.size}`
        : expected.sha256 !== undefined && digest.sha256 !== expected.sha256
          ? `sha256 ${digest.sha256}, expected ${expected.sha256}`
          : expected.gitSha1 !== undefined && digest.gitSha1 !== expected.gitSha1
            ? `git sha1 ${digest.gitSha1}, expected ${expected.gitSha1}`
            : undefined;
    // The bytes hashed are the bytes received; the file must also hold exactly those.
    const onDisk = await sizeOf(part);
    if (!problem && onDisk !== digest.size) {
      await fs.promises.rm(part, { force: true });
      await fs.promises.rm(sidecarPath(dest), { force: true });
      throw new PrepError('HASH_MISMATCH', `${label}: ${part} holds ${onDisk} bytes but ${digest.size} were received; the partial download was deleted`);
    }
    if (problem) {
      await fs.promises.rm(part, { force: true });
      await fs.promises.rm(sidecarPath(dest), { force: true });
      throw new PrepError('HASH_MISMATCH', `${label}: downloaded file does not verify (${problem}); the partial download was deleted`);
    }
    await renameDurably(part, dest);
    await fs.promises.rm(sidecarPath(dest), { force: true });
    return digest;
  } catch (error) {
    throw toPrepError(error, label);
  }
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ? `${error.message}: ${cause.code}` : cause?.message ? `${error.message}: ${cause.message}` : error.message;
}
