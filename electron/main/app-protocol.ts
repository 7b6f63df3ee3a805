/**
 * The window's page comes from `app://renderer/`, a privileged custom scheme served from the built renderer folder,
 * rather than from file:// (Electron's security checklist, item 18): file:// pages get extra privileges (fetching any
 * local file, universal access for file:// frames) that the GrantFileProtocolExtraPrivileges fuse then turns off.
 * This module holds the handler's logic, so it runs and is tested without Electron.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

import { contentTypeFor, insideFolder } from '../node/static-files.js';
import { contentSecurityPolicy } from './serve/content-security-policy.js';

export const APP_SCHEME = 'app';
export const APP_HOST = 'renderer';
export const RENDERER_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/** Only our own page may call the services or be navigated to. */
export function isOwnRendererUrl(url: string): boolean {
  return url === RENDERER_URL || url.startsWith(`${RENDERER_URL}#`) || url.startsWith(`${RENDERER_URL}?`);
}

/**
 * Whether a frame may navigate to `url`: only the main frame, and only within our own page. A subframe should not
 * exist (the CSP has frame-src 'none'); if one does, it goes nowhere.
 */
export function frameNavigationAllowed(isMainFrame: boolean, url: string): boolean {
  return isMainFrame && isOwnRendererUrl(url);
}

/** The file an `app://renderer/…` URL names inside `rendererDir`, or null: another scheme or host, or an escape. */
export function rendererFileFor(url: string, rendererDir: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.host !== APP_HOST || u.username !== '' || u.password !== '') return null;
  let rel: string;
  try {
    rel = u.pathname === '/' ? 'index.html' : decodeURIComponent(u.pathname);
  } catch {
    return null;
  }
  if (rel.includes('\0') || rel.includes('\\')) return null;
  return insideFolder(path.resolve(rendererDir), rel);
}

function notFound(status = 404): Response {
  return new Response(status === 405 ? 'method not allowed' : 'not found', {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
  });
}

/** The response to one request on the scheme: a regular file of the renderer with its type and policy headers. */
export async function rendererResponse(request: { readonly url: string; readonly method: string }, rendererDir: string): Promise<Response> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return notFound(405);
  const file = rendererFileFor(request.url, rendererDir);
  if (!file) return notFound();
  // A link may not lead out of the folder.
  const [real, realRoot] = await Promise.all([realpath(file).catch(() => null), realpath(rendererDir).catch(() => null)]);
  if (!real || !realRoot || !real.startsWith(realRoot + path.sep)) return notFound();
  const info = await stat(real).catch(() => null);
  if (!info?.isFile()) return notFound();
  const headers = {
    'content-type': contentTypeFor(file),
    'content-security-policy': contentSecurityPolicy(),
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  };
  if (request.method === 'HEAD') return new Response(null, { status: 200, headers });
  return new Response(await readFile(real), { status: 200, headers });
}
