import fs from 'node:fs';

/**
 * Throws unless `file` is a regular file no larger than `maxBytes`: a path a user or the renderer gives may name a
 * FIFO (opening it blocks a libuv thread for good), a device (/dev/zero reads without end) or a folder. Follows links,
 * as opening the file would. Errors keep fs's `code` (ENOENT, EACCES) for callers that map it.
 */
export async function checkRegularFile(file: string, maxBytes = Number.MAX_SAFE_INTEGER): Promise<fs.Stats> {
  const info = await fs.promises.stat(file);
  if (!info.isFile()) throw Object.assign(new Error(`${file}: not a regular file`), { code: 'ENOTREGULAR' });
  if (info.size > maxBytes) throw Object.assign(new Error(`${file}: ${info.size} bytes, more than the ${maxBytes} it may hold`), { code: 'EFBIG' });
  return info;
}
