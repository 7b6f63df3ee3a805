import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';

/** Throws the signal's reason (an AbortError when it is not an Error) once it has aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError');
}

/** Digests of one file: sha256 always, the git blob sha1 when asked for. */
export type FileDigest = { readonly sha256: string; readonly gitSha1?: string; readonly size: number };

/** Streams bytes into sha256 and, when the final size is known up front, the git blob sha1 (`sha1("blob <size>\0" + bytes)`). */
export class FileHasher {
  private readonly sha256: Hash = createHash('sha256');
  private readonly sha1: Hash | undefined;
  private size = 0;

  constructor(gitBlobSize?: number) {
    if (gitBlobSize !== undefined) {
      this.sha1 = createHash('sha1');
      this.sha1.update(`blob ${gitBlobSize}\0`);
    }
  }

  update(chunk: Uint8Array): void {
    this.sha256.update(chunk);
    this.sha1?.update(chunk);
    this.size += chunk.length;
  }

  digest(): FileDigest {
    return { sha256: this.sha256.digest('hex'), size: this.size, ...(this.sha1 ? { gitSha1: this.sha1.digest('hex') } : {}) };
  }

  /** Feeds the first `length` bytes of a file (all of it when omitted), reporting bytes read. */
  async updateFromFile(file: string, length?: number, onBytes?: (n: number) => void, signal?: AbortSignal): Promise<void> {
    if (length === 0) return;
    const stream = fs.createReadStream(file, { highWaterMark: 1 << 20, ...(length !== undefined ? { end: length - 1 } : {}) });
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (signal?.aborted) {
        stream.destroy();
        throwIfAborted(signal);
      }
      this.update(chunk);
      onBytes?.(chunk.length);
    }
  }
}

/** sha256 (and the git blob sha1 when `git` is set) of a whole file. */
export async function hashFile(
  file: string,
  opts: { git?: boolean; onBytes?: (n: number) => void; signal?: AbortSignal } = {},
): Promise<FileDigest> {
  const size = (await fs.promises.stat(file)).size;
  const hasher = new FileHasher(opts.git ? size : undefined);
  await hasher.updateFromFile(file, undefined, opts.onBytes, opts.signal);
  return hasher.digest();
}
