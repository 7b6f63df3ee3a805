/**
 * Packaging check without the Electron binary (see shared/TOOLCHAIN.md): runs `electron-builder --dir` against a stub
 * electronDist and checks the unpacked app: the built entry points are inside app.asar, every `.node` addon is
 * unpacked next to it, the CUDA simulator's test addon is left out, the icon is present, and the fuses that
 * electron-builder.yml sets were flipped in the binary (the stub carries a fuse wire in Electron's defaults). Run after
 * `npm run build`: `npm run check:packaging`.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const asar = require('@electron/asar') as { listPackage(file: string): string[] };

// @electron/fuses' wire: the sentinel, the version (1), the length, then one byte per fuse ('0' off, '1' on).
const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
const FUSE_NAMES = [
  'runAsNode',
  'enableCookieEncryption',
  'enableNodeOptionsEnvironmentVariable',
  'enableNodeCliInspectArguments',
  'enableEmbeddedAsarIntegrityValidation',
  'onlyLoadAppFromAsar',
  'loadBrowserProcessSpecificV8Snapshot',
  'grantFileProtocolExtraPrivileges',
] as const;
// Electron's own settings before any flip.
const FUSE_DEFAULTS = '10110001';

function readFuses(binary: string): Record<string, boolean> {
  const bytes = readFileSync(binary);
  const at = bytes.indexOf(FUSE_SENTINEL);
  if (at < 0) throw new Error(`${binary}: no fuse wire`);
  const wire = at + FUSE_SENTINEL.length;
  const length = bytes[wire + 1] ?? 0;
  return Object.fromEntries(FUSE_NAMES.slice(0, length).map((name, i) => [name, bytes[wire + 2 + i] === 0x31]));
}

/**
 * The electronFuses block of electron-builder.yml (flat `key: true|false` lines, comments allowed). A line it cannot
 * read is an error rather than a fuse left unchecked.
 */
export function configuredFuses(yml: string): Record<string, boolean> {
  const block = /^electronFuses:[ \t]*(?:#.*)?\r?\n((?:(?:[ \t]+\S.*|[ \t]*)(?:\r?\n|$))+)/m.exec(yml);
  if (!block) throw new Error('electron-builder.yml: no electronFuses block');
  const fuses: Record<string, boolean> = {};
  for (const line of block[1]!.split(/\r?\n/)) {
    const text = line.replace(/(^|\s)#.*$/, '').trim();
    if (text === '') continue;
    const m = /^(\w+):\s*(true|false)$/.exec(text);
    if (!m) throw new Error(`electron-builder.yml: electronFuses line '${line.trim()}' is not 'name: true|false'`);
    fuses[m[1]!] = m[2] === 'true';
  }
  return fuses;
}

function stubElectronDist(dir: string): void {
  const version = (JSON.parse(readFileSync(path.join(root, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version;
  mkdirSync(path.join(dir, 'resources'), { recursive: true });
  mkdirSync(path.join(dir, 'locales'), { recursive: true });
  writeFileSync(path.join(dir, 'version'), version);
  writeFileSync(path.join(dir, 'electron'), `#!/bin/sh\nexit 0\n${FUSE_SENTINEL}\x01${String.fromCharCode(FUSE_DEFAULTS.length)}${FUSE_DEFAULTS}\n`);
  chmodSync(path.join(dir, 'electron'), 0o755);
  writeFileSync(path.join(dir, 'LICENSE'), '');
  writeFileSync(path.join(dir, 'LICENSES.chromium.html'), '');
}

function main(): number {
  for (const built of ['out/renderer/index.html', 'out/preload/index.cjs', 'out/electron/main/index.js']) {
    if (!existsSync(path.join(root, built))) {
      console.error(`check-packaging: ${built} is missing; run 'npm run build' first`);
      return 1;
    }
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'horizon-pack-'));
  try {
    const dist = path.join(tmp, 'electron-dist');
    const out = path.join(tmp, 'out');
    stubElectronDist(dist);
    execFileSync(
      'npx',
      ['electron-builder', '--dir', '--linux', `-c.electronDist=${dist}`, '-c.npmRebuild=false', `-c.directories.output=${out}`],
      { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const resources = path.join(out, 'linux-unpacked', 'resources');
    const inAsar = new Set(asar.listPackage(path.join(resources, 'app.asar')).map((p) => p.replaceAll('\\', '/')));
    const problems: string[] = [];
    for (const f of ['/package.json', '/out/renderer/index.html', '/out/preload/index.cjs', '/out/electron/main/index.js', '/out/electron/worker/index.js', '/out/electron/cli/bin.js']) {
      if (!inAsar.has(f)) problems.push(`app.asar lacks ${f}`);
    }
    const addons = [...inAsar].filter((p) => p.endsWith('.node'));
    for (const a of addons) {
      if (!existsSync(path.join(resources, 'app.asar.unpacked', a))) problems.push(`${a} is not unpacked from app.asar`);
    }
    for (const a of ['/native/build/Release/horizon_runtime.node', '/node_modules/better-sqlite3/build/Release/better_sqlite3.node']) {
      if (!addons.includes(a)) problems.push(`the package lacks ${a}`);
    }
    // The test addon over the CUDA simulator must never pass for the GPU runtime in a package.
    if (addons.some((a) => a.endsWith('/horizon_runtime_sim.node'))) problems.push('the package holds the CUDA simulator test addon');
    if (!existsSync(path.join(resources, 'app.asar.unpacked', 'resources', 'icon.png'))) problems.push('resources/icon.png is not unpacked');
    const packageName = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string }).name;
    const fuses = readFuses(path.join(out, 'linux-unpacked', packageName));
    const wanted = configuredFuses(readFileSync(path.join(root, 'electron-builder.yml'), 'utf8'));
    if (Object.keys(wanted).length === 0) problems.push('electron-builder.yml sets no fuses');
    for (const [name, on] of Object.entries(wanted)) {
      if (fuses[name] !== on) problems.push(`fuse ${name} is ${String(fuses[name])} in the packaged binary, electron-builder.yml says ${String(on)}`);
    }
    // The fuse makes Electron check app.asar against a hash electron-builder embeds; with that turned off, or no
    // asar, the app would refuse to start on Windows and macOS.
    const yml = readFileSync(path.join(root, 'electron-builder.yml'), 'utf8');
    if (wanted.enableEmbeddedAsarIntegrityValidation) {
      if (/^disableAsarIntegrity:\s*true\b/m.test(yml)) problems.push('enableEmbeddedAsarIntegrityValidation is on but disableAsarIntegrity stops electron-builder embedding the hash');
      if (!/^asar:\s*true\b/m.test(yml)) problems.push('enableEmbeddedAsarIntegrityValidation needs asar: true');
    }
    if (problems.length) {
      for (const p of problems) console.error(`check-packaging: ${p}`);
      return 1;
    }
    console.log(
      `check-packaging: ok (${inAsar.size} entries in app.asar, ${addons.length} native addons unpacked, ${Object.keys(wanted).length} fuses set)`,
    );
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
