/**
 * `horizon pack` as a person sees it: a failure after the progress line started prints its error on a line of its own;
 * as the app sees it (--progress-json): the runtime's status beside the message.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';

const CLI = join(resolve(import.meta.dirname, '..', '..'), 'scripts', 'horizon.mjs');

/** Writes a BF16 NaN over the first element of `tensor` in whichever shard of `dir` holds it. */
function plantNaN(dir: string, tensor: string): void {
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.safetensors'))) {
    const fd = openSync(join(dir, name), 'r+');
    try {
      const len = Buffer.alloc(8);
      readSync(fd, len, 0, 8, 0);
      const n = Number(len.readBigUInt64LE());
      const header = Buffer.alloc(n);
      readSync(fd, header, 0, n, 8);
      const entry = (JSON.parse(header.toString('utf8')) as Record<string, { data_offsets: [number, number] }>)[tensor];
      if (!entry) continue;
      writeSync(fd, Buffer.from([0xc0, 0x7f]), 0, 2, 8 + n + entry.data_offsets[0]);
      return;
    } finally {
      closeSync(fd);
    }
  }
  throw new Error(`${tensor} not found in ${dir}`);
}

describe('horizon pack output', () => {
  const root = mkdtempSync(join(tmpdir(), 'horizon-pack-cli-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('ends the progress line before the error', async () => {
    const model = await makeTinyModel(join(root, 'tiny'), { seed: 4 });
    plantNaN(model.dir, 'model.layers.1.mlp.experts.3.up_proj.weight');
    const r = spawnSync(process.execPath, [CLI, 'pack', '--model', model.dir, '--out', join(root, 'out')], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^\rpack \d+\/\d+ MiB/);
    expect(r.stderr).toMatch(/MiB\nhorizon pack: .*'model\.layers\.1\.mlp\.experts\.3\.up_proj\.weight' \[0, 0\] = nan is not a finite number/);
  });

  it("puts the runtime's status beside the message on its JSON error line", async () => {
    const model = await makeTinyModel(join(root, 'tiny-json'), { seed: 5 });
    plantNaN(model.dir, 'model.layers.0.mlp.experts.1.down_proj.weight');
    const r = spawnSync(process.execPath, [CLI, 'pack', '--model', model.dir, '--out', join(root, 'out-json'), '--progress-json'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    const error = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((m) => m.type === 'error');
    expect(error).toMatchObject({ code: 'model_invalid', message: expect.stringMatching(/down_proj\.weight' \[0, 0\] = nan is not a finite number/) });
  });
});
