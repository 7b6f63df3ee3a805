import type { NewRun } from '../../../../../electron/main/db/run-repo.js';

/** Test helper: a run record with every field set. */
export const sampleRun = (id: string): NewRun => ({
  id,
  modelId: 'tiny@abc/int4',
  modelRepo: 'horizon/tiny',
  modelRevision: 'a'.repeat(40),
  modelDir: '/models/tiny',
  packedDir: '/models/tiny/int4-g32',
  weights: 'int4',
  manifestSha256: 'b'.repeat(64),
  manifestJson: '{"files":[]}',
  backend: 'cpu',
  deviceLabel: 'CPU',
  residency: 'host',
  policy: { decoding: 'greedy', maxNewTokens: 16, batch: 2, stopTokenIds: [0], limit: 3, chatTemplate: 'tokenizer_config.json', requestedBackend: 'auto' },
  appVersion: '0.1.0',
  datasetSha256: 'c'.repeat(64),
  total: 3,
});
