import path from 'node:path';

/** Content types of the files the built renderer and `horizon serve` hand out. */
export const MIME: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.zip': 'application/zip',
};

export function contentTypeFor(file: string): string {
  return MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/** Resolves the URL path `rel` inside the folder `root`, or null when it would escape it. */
export function insideFolder(root: string, rel: string): string | null {
  // Resolved first: a root given with a trailing separator or dots would match no path at all.
  const base = path.resolve(root);
  const full = path.resolve(base, '.' + path.posix.normalize('/' + rel));
  return full === base || full.startsWith(base + path.sep) ? full : null;
}
