import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { OFFICIAL_INPUT_SHA256 } from '../../evals/ifeval/dataset.js';
import { loadTextTools } from '../../evals/ifeval/node/load-text-tools.js';
import { resolvePunktDir } from '../../evals/ifeval/node/punkt-dir.js';
import type { TextTools } from '../../evals/ifeval/text/text-tools.js';
import { dataLayout } from '../main/data-dir.js';
import type { VerifyResultZipOptions } from '../main/export/verify-result-zip.js';
import { sharedAssetsDir } from '../main/jobs/eval-inputs.js';
import { REPO_ROOT } from '../node/app-root.js';

/** What re-scoring a result ZIP needs beside the ZIP: the scorer's text tools and, when found, the official prompts. */
export interface VerifierInputs {
  readonly tools: TextTools;
  /**
   * verifyResultZip's options: the official IFEval input_data.jsonl, which a partial official run's rows are compared
   * with, when found.
   */
  readonly verifyOptions: VerifyResultZipOptions;
  /** Where it was looked for, for the message that says it was not found. */
  readonly officialCandidates: readonly string[];
}

/** The official input_data.jsonl from the first of `candidates` that holds it (sha256-checked), if any. */
function readOfficialInput(candidates: readonly string[]): string | undefined {
  for (const file of candidates) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    if (createHash('sha256').update(text).digest('hex') === OFFICIAL_INPUT_SHA256) return text;
  }
  return undefined;
}

/**
 * The text tools from `punkt` (else the app's or the data folder's Punkt parameters) and the official prompts from
 * <app>/../shared/ifeval or the data folder's copy.
 */
export async function loadVerifierInputs(dataDir: string, punkt: string | undefined): Promise<VerifierInputs> {
  const punktDir = resolvePunktDir({ repoRoot: REPO_ROOT, dataCopy: dataLayout.punktDir(dataDir), ...(punkt ? { explicit: punkt } : {}) });
  const tools = await loadTextTools({ punktDir });
  const officialCandidates = [path.join(sharedAssetsDir(), 'ifeval', 'input_data.jsonl'), path.join(dataLayout.ifevalDir(dataDir), 'input_data.jsonl')];
  const officialInputText = readOfficialInput(officialCandidates);
  return { tools, officialCandidates, verifyOptions: officialInputText === undefined ? {} : { officialInputText } };
}
