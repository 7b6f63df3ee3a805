import { existsSync } from 'node:fs';
import path from 'node:path';

import { readPromptRecords } from '../../../evals/ifeval/node/dataset.js';
import { loadTextTools } from '../../../evals/ifeval/node/load-text-tools.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import type { PromptRecord } from '../../../evals/ifeval/types.js';
import { REPO_ROOT } from '../../node/app-root.js';
import { evalAssetsStatus, importIfevalData, importPunkt } from '../prep/eval-assets.js';

/** The dataset and text tools a run scores with. */
export interface EvalInputs {
  readonly records: readonly PromptRecord[];
  readonly tools: TextTools;
  /** input_data.jsonl verbatim (exported into result ZIPs). */
  readonly inputDataText: string;
  readonly datasetSha256: string;
  readonly inputPath: string;
  readonly punktDir: string;
  /** What was imported from the shared folder on this call (empty when the data dir already had everything). */
  readonly imported: readonly string[];
}

/** `<repo>/../shared`, where the development machines keep the eval assets. */
export function sharedAssetsDir(): string {
  return path.resolve(REPO_ROOT, '..', 'shared');
}

/**
 * Loads the IFEval prompts and Punkt parameters from the data dir, first importing them from `sharedDir` (default
 * `<repo>/../shared`) when the data dir lacks them and that folder has them. Throws a message saying how to get
 * them otherwise.
 */
export async function loadEvalInputs(dataDir: string, sharedDir: string = sharedAssetsDir()): Promise<EvalInputs> {
  const imported: string[] = [];
  let status = await evalAssetsStatus(dataDir);
  const sharedInput = path.join(sharedDir, 'ifeval', 'input_data.jsonl');
  const sharedPunkt = path.join(sharedDir, 'nltk', 'punkt_english');
  if (!status.ifeval.ready && existsSync(sharedInput)) imported.push(await importIfevalData(dataDir, sharedInput));
  if (!status.punkt.ready && existsSync(sharedPunkt)) imported.push(await importPunkt(dataDir, sharedPunkt));
  if (imported.length > 0) status = await evalAssetsStatus(dataDir);
  const missing = [
    ...(status.ifeval.ready ? [] : [`IFEval prompts (${status.ifeval.path})`]),
    ...(status.punkt.ready ? [] : [`Punkt English parameters (${status.punkt.dir})`]),
  ];
  if (missing.length > 0) {
    throw new Error(
      `eval assets missing in ${dataDir}: ${missing.join('; ')}. Run 'npx horizon assets --dir ${dataDir}' to download them, ` +
        `or import local copies with 'npx horizon assets --dir ${dataDir} --import-ifeval input_data.jsonl --import-punkt DIR'`,
    );
  }
  const input = await readPromptRecords(status.ifeval.path);
  return {
    records: input.records,
    tools: await loadTextTools({ punktDir: status.punkt.dir }),
    inputDataText: input.text,
    datasetSha256: input.sha256,
    inputPath: status.ifeval.path,
    punktDir: status.punkt.dir,
    imported,
  };
}
