import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import { DatasetError, OFFICIAL_INPUT_ROWS, OFFICIAL_INPUT_SHA256, parsePromptRecords, parseResponses } from '../dataset.js';
import type { PromptRecord } from '../types.js';

/** How strictly to tie an input file to the official IFEval set. */
export interface LoadPromptRecordsOptions {
  /**
   * `'auto'` (default): a file of 541 rows claims to be the official set, so its sha256 must match;
   * `true`: the sha256 must match whatever the row count; `false`: no check (a custom or edited set).
   */
  readonly expectOfficial?: boolean | 'auto';
}

async function readText(file: string): Promise<{ text: string; bytes: Buffer }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw new DatasetError(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return { text: bytes.toString('utf8'), bytes };
}

/** An input_data.jsonl as read once: its rows, its verbatim text and the sha256 of its bytes. */
export interface PromptRecordsFile {
  readonly records: PromptRecord[];
  readonly text: string;
  readonly sha256: string;
}

/** Reads and validates an IFEval input_data.jsonl, keeping its text and sha256; throws DatasetError naming the file. */
export async function readPromptRecords(file: string, options: LoadPromptRecordsOptions = {}): Promise<PromptRecordsFile> {
  const { text, bytes } = await readText(file);
  const records = parsePromptRecords(text, file);
  const sha = createHash('sha256').update(bytes).digest('hex');
  const expect = options.expectOfficial ?? 'auto';
  if ((expect === true || (expect === 'auto' && records.length === OFFICIAL_INPUT_ROWS)) && sha !== OFFICIAL_INPUT_SHA256) {
    throw new DatasetError(
      `${file}: sha256 ${sha} is not the official IFEval input_data.jsonl (${OFFICIAL_INPUT_SHA256}); ` +
        `a ${records.length}-row file is taken to be the official set unless the official check is turned off`,
    );
  }
  return { records, text, sha256: sha };
}

/** Reads and validates an IFEval input_data.jsonl; throws DatasetError naming the file (and line). */
export async function loadPromptRecords(file: string, options: LoadPromptRecordsOptions = {}): Promise<PromptRecord[]> {
  return (await readPromptRecords(file, options)).records;
}

/** Reads a responses JSONL (`{"prompt", "response"}` rows) as prompt → response; throws DatasetError. */
export async function loadResponses(file: string): Promise<Map<string, string>> {
  const { text } = await readText(file);
  return parseResponses(text, file);
}
