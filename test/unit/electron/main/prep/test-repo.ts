// Shared set-up for the preparation tests: a tiny OLMoE repo on disk plus files the preparation must not fetch.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { makeTinyModel } from '../../../../../scripts/make-tiny-model.js';

export const TEST_REPO = 'test-org/tiny-olmoe';
export const TEST_TOKEN = 'hf_test_token_123';

const created: string[] = [];

/** A fresh temp folder, removed by removeTempDirs(). */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `horizon-${prefix}-`));
  created.push(dir);
  return dir;
}

/** Removes every folder tempDir() made in this test file. */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Writes a tiny OLMoE checkpoint plus a README.md and an unused extra.bin into `dir`, and the chat template also as
 * chat_template.jinja (the layout newer checkpoints have).
 */
export async function makeTestRepo(dir: string, seed = 1): Promise<string> {
  await makeTinyModel(dir, { seed });
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')) as { chat_template: string };
  fs.writeFileSync(path.join(dir, 'chat_template.jinja'), config.chat_template);
  fs.writeFileSync(path.join(dir, 'README.md'), '# tiny test model\n');
  fs.writeFileSync(path.join(dir, 'extra.bin'), Buffer.alloc(4096, 7));
  return dir;
}

/** A minimal fake of `horizon pack --progress-json`: copies the metadata, writes one shard, manifest last. */
export const FAKE_PACKER = path.join(path.dirname(new URL(import.meta.url).pathname), 'fake-packer.mjs');
