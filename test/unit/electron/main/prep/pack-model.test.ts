import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';

import { afterAll, describe, expect, it } from 'vitest';

import type { PackerUtilityProcess, PackProgress } from '../../../../../electron/main/prep/pack-model.js';
import { defaultPackerCommand, runPacker, utilityProcessPacker } from '../../../../../electron/main/prep/pack-model.js';
import { PrepError } from '../../../../../electron/main/prep/prep-error.js';
import { REPO_ROOT } from '../../../../../electron/node/app-root.js';
import { FAKE_PACKER } from './test-repo.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'horizon-packer-cmd-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('defaultPackerCommand', () => {
  it('runs the TypeScript CLI of a checkout', () => {
    const cmd = defaultPackerCommand(REPO_ROOT);
    expect(cmd).toEqual({ command: process.execPath, args: [path.join(REPO_ROOT, 'scripts', 'horizon.mjs')] });
  });

  it('refuses to run under Electron, whose binary is the app itself (the shell launches a utilityProcess)', () => {
    expect(() => defaultPackerCommand(REPO_ROOT, { ...process.versions, electron: '45.5.0' })).toThrow(/utilityProcess/);
  });

  it('runs the compiled CLI where the sources are not shipped (a packaged app)', () => {
    const app = path.join(tmp, 'app');
    mkdirSync(path.join(app, 'out', 'electron', 'cli'), { recursive: true });
    writeFileSync(path.join(app, 'out', 'electron', 'cli', 'bin.js'), '');
    expect(defaultPackerCommand(app).args).toEqual([path.join(app, 'out', 'electron', 'cli', 'bin.js')]);
  });
});

/**
 * Electron's utilityProcess as the packer launcher sees it, played by a Node child process: `exit` is emitted as soon
 * as the child exits, and each piece of output reaches the parent's streams `lagMs` after it was written (a utility
 * process's output pipes are not drained before its exit event). `forks` records each fork's module, arguments and options.
 */
function fakeUtilityProcess(lagMs: number) {
  const forks: { modulePath: string; args: string[]; options: unknown }[] = [];
  const utility: PackerUtilityProcess = {
    fork(modulePath, args = [], options) {
      forks.push({ modulePath, args, options });
      const child = spawn(process.execPath, [modulePath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      const events = new EventEmitter();
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      child.stdout.on('data', (b: Buffer) => setTimeout(() => stdout.write(b), lagMs));
      child.stderr.on('data', (b: Buffer) => setTimeout(() => stderr.write(b), lagMs));
      child.once('close', (code, signal) => {
        events.emit('exit', code ?? (signal ? 1 : 0));
        setTimeout(() => {
          stdout.end();
          stderr.end();
        }, lagMs + 1);
      });
      return {
        stdout,
        stderr,
        once: (event, listener) => events.once(event, listener),
        kill: () => child.kill('SIGTERM'),
      };
    },
  };
  return { utility, forks };
}

describe('utilityProcessPacker', () => {
  const source = path.join(tmp, 'source');
  mkdirSync(source, { recursive: true });
  writeFileSync(path.join(source, 'config.json'), JSON.stringify({ hidden_size: 64, intermediate_size: 32 }));
  writeFileSync(path.join(source, 'model.safetensors'), 'weights');
  const pack = (out: string, launcher: ReturnType<typeof utilityProcessPacker>, extra: { signal?: AbortSignal; onProgress?: (p: PackProgress) => void } = {}) =>
    runPacker({ source, out: path.join(tmp, out), repo: 'horizon/tiny', commit: 'c'.repeat(40), packer: launcher, ...extra });

  it('forks the CLI entry with the pack arguments, and reads the output that arrives after the exit', async () => {
    const { utility, forks } = fakeUtilityProcess(150);
    const progress: PackProgress[] = [];
    await pack('out-a', utilityProcessPacker(utility, FAKE_PACKER), { onProgress: (p) => progress.push(p) });
    expect(forks).toEqual([{
      modulePath: FAKE_PACKER,
      args: ['pack', '--model', source, '--out', path.join(tmp, 'out-a'), '--repo', 'horizon/tiny', '--revision', 'c'.repeat(40), '--progress-json'],
      options: { serviceName: 'Horizon packer', stdio: 'pipe' },
    }]);
    expect(progress.map((p) => `${p.phase} ${p.doneBytes}/${p.totalBytes}`)).toEqual(['pack 1/4', 'pack 2/4', 'pack 3/4', 'pack 4/4', 'hash 3/4', 'hash 4/4']);
    expect(existsSync(path.join(tmp, 'out-a', 'horizon-manifest.json'))).toBe(true);
  });

  it('fails with the error output of a packer that exits non-zero, read after the exit', async () => {
    const { utility } = fakeUtilityProcess(100);
    const launcher = utilityProcessPacker(utility, FAKE_PACKER);
    process.env.FAKE_PACKER_FAIL = '1';
    try {
      const e = await pack('out-b', launcher).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(PrepError);
      expect((e as PrepError).code).toBe('INTERNAL');
      expect((e as PrepError).message).toMatch(/failed \(exit 3\): fake packer: injected failure/);
    } finally {
      delete process.env.FAKE_PACKER_FAIL;
    }
  });

  it.each([
    ['model_invalid', 'MODEL_INVALID'],
    ['out_of_memory', 'OUT_OF_MEMORY'],
    ['invalid_request', 'BAD_INPUT'],
    ['internal', 'INTERNAL'],
  ])("takes the code of a runtime error from the packer's error line (%s)", async (status, code) => {
    const { utility } = fakeUtilityProcess(100);
    process.env.FAKE_PACKER_FAIL = `status:${status}`;
    try {
      const e = await pack(`out-${status}`, utilityProcessPacker(utility, FAKE_PACKER)).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(PrepError);
      expect((e as PrepError).code).toBe(code);
      expect((e as PrepError).message).toMatch(new RegExp(`: model\\.safetensors: the packer says ${status}$`));
    } finally {
      delete process.env.FAKE_PACKER_FAIL;
    }
  });

  it('kills the utility process on abort and reports the pack as cancelled', async () => {
    const { utility } = fakeUtilityProcess(0);
    const controller = new AbortController();
    process.env.FAKE_PACKER_DELAY_MS = '300';
    try {
      const e = await pack('out-c', utilityProcessPacker(utility, FAKE_PACKER), {
        signal: controller.signal,
        onProgress: () => controller.abort(),
      }).catch((x: unknown) => x);
      expect((e as PrepError).code).toBe('CANCELLED');
      expect(existsSync(path.join(tmp, 'out-c', 'horizon-manifest.json'))).toBe(false);
    } finally {
      delete process.env.FAKE_PACKER_DELAY_MS;
    }
  });

  it('says why when the utility process has no output pipes', async () => {
    const utility: PackerUtilityProcess = { fork: () => ({ stdout: null, stderr: null, once: () => undefined, kill: () => true }) };
    await expect(pack('out-d', utilityProcessPacker(utility, '/app/cli.js'))).rejects.toThrow(/cannot run the packer: utilityProcess \/app\/cli\.js has no output pipes/);
  });
});
