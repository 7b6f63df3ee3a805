// Builds evals/ifeval/text/langdetect/langdetect-data.json.gz from an installed Python langdetect 1.0.9 package
// (Debian: `apt-get install python3-langdetect`, files in /usr/lib/python3/dist-packages/langdetect):
//   npx tsx scripts/ifeval/build-langdetect-data.ts [langdetectPackageDir]
// The output holds utils/messages.properties (decoded) and all profiles/*, sorted by file name.
import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { validateLangProfile } from '../../evals/ifeval/text/langdetect/langdetect-data.js';
import type { LangdetectData, LangProfile } from '../../evals/ifeval/text/langdetect/langdetect-data.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = path.join(ROOT, 'evals/ifeval/text/langdetect/langdetect-data.json.gz');

/** Python's `value.encode().decode('unicode_escape')` for the escapes messages.properties uses. */
function decodeUnicodeEscape(value: string): string {
  return value.replace(/\\u([0-9a-fA-F]{4})|\\(.)/g, (_m, hex: string | undefined, other: string | undefined) => {
    if (hex) return String.fromCharCode(parseInt(hex, 16));
    throw new Error(`messages.properties: unsupported escape \\${other}`);
  });
}

async function main(): Promise<void> {
  const pkg = process.argv[2] ?? '/usr/lib/python3/dist-packages/langdetect';
  const messagesFile = path.join(pkg, 'utils', 'messages.properties');
  const messages: Record<string, string> = {};
  for (const line of (await readFile(messagesFile, 'utf8')).split('\n')) {
    const stripped = line.trim();
    const eq = stripped.indexOf('=');
    if (eq < 0) continue;
    messages[stripped.slice(0, eq)] = decodeUnicodeEscape(stripped.slice(eq + 1));
  }
  const profileDir = path.join(pkg, 'profiles');
  const profiles: LangProfile[] = [];
  for (const name of (await readdir(profileDir)).sort()) {
    const file = path.join(profileDir, name);
    if (name.startsWith('.') || !(await stat(file)).isFile()) continue;
    const p = validateLangProfile(JSON.parse(await readFile(file, 'utf8')), file);
    profiles.push({ name: p.name, freq: p.freq, n_words: p.n_words });
  }
  let version = 'unknown version';
  try {
    const info = await readFile(path.join(pkg, '..', 'langdetect-1.0.9.egg-info', 'PKG-INFO'), 'utf8');
    version = /^Version: (.*)$/m.exec(info)?.[1] ?? version;
  } catch {
    // The version label is informative only.
  }
  const data: LangdetectData = { source: `Python langdetect ${version} (${pkg})`, messages, profiles };
  const tmp = `${OUT}.tmp-${process.pid}`;
  await writeFile(tmp, gzipSync(Buffer.from(JSON.stringify(data)), { level: 9 }));
  await rename(tmp, OUT);
  console.log(`${OUT}: ${profiles.length} profiles, ${Object.keys(messages).length} messages from ${data.source}`);
}

await main();
