import { setTimeout as sleep } from 'node:timers/promises';

import { HubApiError, listFiles, modelInfo } from '@huggingface/hub';

import { gatedRepoError, PrepError } from './prep-error.js';

/** One file of a repo at a commit, as the Hub tree lists it. */
export type RepoFile = {
  readonly path: string;
  readonly size: number;
  /** LFS files: the content sha256 (`lfs.oid`). */
  readonly sha256?: string;
  /** Non-LFS files: the git blob sha1 (the tree `oid`). */
  readonly gitSha1?: string;
};

export type ResolvedRepo = { readonly repo: string; readonly commit: string; readonly files: readonly RepoFile[] };

export type ResolveRepoOptions = {
  readonly repo: string;
  readonly revision: string;
  readonly hubUrl: string;
  readonly token?: string;
  readonly fetch?: typeof fetch;
  /** Attempts for network failures (default 3). */
  readonly retries?: number;
  readonly backoffMs?: number;
  readonly signal?: AbortSignal;
};

const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$)$/i;

/**
 * Why a path the Hub lists cannot be a file inside the model folder ('' when it can): the listing comes from the
 * network and its paths become file names on disk.
 */
export function unsafeRepoPath(p: string): string {
  if (p === '' || p.startsWith('/')) return 'it is empty or absolute';
  // eslint-disable-next-line no-control-regex
  if (/[\\:\u0000-\u001f]/.test(p)) return 'it holds a backslash, a colon or a control character';
  const segments = p.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return "it has an empty, '.' or '..' segment";
  // Windows refuses these characters and trailing dots or spaces, and opens a device for a reserved base name.
  if (/[<>"|?*]/.test(p)) return 'it holds a character Windows does not allow in file names (< > " | ? *)';
  if (segments.some((s) => /[. ]$/.test(s))) return "a segment ends in '.' or a space, which Windows drops";
  const device = segments.find((s) => WINDOWS_DEVICE.test(s.split('.')[0]!.trimEnd()));
  if (device !== undefined) return `'${device}' names a Windows device (CON, PRN, AUX, NUL, COM0-9, LPT0-9)`;
  return '';
}

/** Resolves `revision` to a commit sha and lists the repo's files there, with clear errors for 401/403/404. */
export async function resolveRepo(opts: ResolveRepoOptions): Promise<ResolvedRepo> {
  if (!/^[\w.-]+\/[\w.-]+$/.test(opts.repo)) throw new PrepError('BAD_INPUT', `'${opts.repo}' is not a model repo id (expected org/name)`);
  if (opts.token !== undefined && !opts.token.startsWith('hf_')) {
    throw new PrepError('BAD_INPUT', 'the access token must start with "hf_" (create one at huggingface.co/settings/tokens)');
  }
  let lastErrorCode: string | null = null;
  const baseFetch = opts.fetch ?? fetch;
  const trackingFetch: typeof fetch = async (input, init) => {
    const res = await baseFetch(input, { ...init, signal: opts.signal });
    lastErrorCode = res.headers.get('x-error-code');
    return res;
  };
  const common = { hubUrl: opts.hubUrl, fetch: trackingFetch, ...(opts.token ? { accessToken: opts.token } : {}) };
  const where = `${opts.repo}@${opts.revision}`;
  const attempts = opts.retries ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      const info = await modelInfo({ name: opts.repo, revision: opts.revision, additionalFields: ['sha'], ...common });
      const commit = (info as { sha?: unknown }).sha;
      if (typeof commit !== 'string' || !/^[0-9a-f]{40}$/.test(commit)) {
        throw new PrepError('NETWORK', `${where}: the Hub at ${opts.hubUrl} returned no commit sha`);
      }
      const files: RepoFile[] = [];
      for await (const entry of listFiles({ repo: { type: 'model', name: opts.repo }, revision: commit, recursive: true, ...common })) {
        if (entry.type !== 'file') continue;
        const unsafe = unsafeRepoPath(entry.path);
        if (unsafe) throw new PrepError('MODEL_INVALID', `${where}: the Hub lists a file '${entry.path}' that cannot be saved inside the model folder (${unsafe})`);
        files.push(
          entry.lfs
            ? { path: entry.path, size: entry.lfs.size, sha256: entry.lfs.oid }
            : { path: entry.path, size: entry.size, ...(entry.oid ? { gitSha1: entry.oid } : {}) },
        );
      }
      return { repo: opts.repo, commit, files };
    } catch (error) {
      if (opts.signal?.aborted) throw new PrepError('CANCELLED', `${where}: cancelled`);
      if (error instanceof PrepError) throw error;
      const retryable = !(error instanceof HubApiError) || error.statusCode >= 500 || error.statusCode === 429;
      if (!retryable || (error instanceof HubApiError && attempt >= attempts)) throw hubError(error, lastErrorCode, opts, where);
      if (attempt >= attempts) {
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        throw new PrepError('NETWORK', `${where}: cannot reach the Hub at ${opts.hubUrl} (${cause ?? (error as Error).message})`, {
          cause: error,
        });
      }
      try {
        await sleep((opts.backoffMs ?? 1000) * 2 ** (attempt - 1), undefined, opts.signal ? { signal: opts.signal } : {});
      } catch {
        throw new PrepError('CANCELLED', `${where}: cancelled`);
      }
    }
  }
}

function hubError(error: HubApiError, code: string | null, opts: ResolveRepoOptions, where: string): PrepError {
  const status = error.statusCode;
  const detail = String((error.data as { error?: unknown } | undefined)?.error ?? '');
  if (code === 'RevisionNotFound' || (code !== 'RepoNotFound' && status === 404 && /invalid rev|revision/i.test(detail))) {
    return new PrepError('NOT_FOUND', `${where}: revision '${opts.revision}' not found in ${opts.repo} (HTTP ${status})`);
  }
  if (code === 'GatedRepo' || (code !== 'RepoNotFound' && (status === 401 || status === 403))) {
    return gatedRepoError(where, status, Boolean(opts.token));
  }
  if (code === 'RepoNotFound' || status === 404 || status === 401) {
    return new PrepError(
      'MODEL_NOT_FOUND',
      `${where}: model repo '${opts.repo}' not found on ${opts.hubUrl} (HTTP ${status})${opts.token ? '' : '; if it is private, give an access token'}`,
    );
  }
  return new PrepError('NETWORK', `${where}: the Hub answered HTTP ${status}: ${error.message}`);
}
