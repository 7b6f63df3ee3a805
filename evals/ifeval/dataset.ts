import { buildChecker, isInstructionId } from './registry.js';
import { KwargsError } from './types.js';
import type { InstructionId, PromptRecord } from './types.js';

/** sha256 of the official input_data.jsonl (google-research instruction_following_eval/data). */
export const OFFICIAL_INPUT_SHA256 = '67ffeee0fcb87c317c5b08a2de85557b4a7e96ada6178aa645b4954fe4b53d49';
/** Rows in the official input_data.jsonl. */
export const OFFICIAL_INPUT_ROWS = 541;

/** A problem in an input or responses file; the message names the file and, where there is one, the line. */
export class DatasetError extends Error {
  override name = 'DatasetError';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Non-empty JSONL lines with their 1-based numbers; a blank line is an error, a final newline is not. */
function* jsonlRows(text: string, file: string): Generator<{ line: number; value: unknown }> {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.endsWith('\r') ? lines[i]!.slice(0, -1) : lines[i]!;
    if (raw.trim() === '') throw new DatasetError(`${file}:${i + 1}: empty line`);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new DatasetError(`${file}:${i + 1}: invalid JSON (${(e as Error).message})`);
    }
    yield { line: i + 1, value };
  }
}

/**
 * Parses and validates input_data.jsonl text: every row has an integer `key` (unique), a string `prompt`, known
 * instruction ids and kwargs that fit each instruction (null-valued kwargs are dropped). Throws DatasetError.
 */
export function parsePromptRecords(text: string, file: string): PromptRecord[] {
  const records: PromptRecord[] = [];
  const keyLines = new Map<number, number>();
  for (const { line, value } of jsonlRows(text, file)) {
    const at = `${file}:${line}`;
    if (!isPlainObject(value)) throw new DatasetError(`${at}: a row must be a JSON object`);
    const { key, prompt, instruction_id_list: ids, kwargs } = value;
    if (!Number.isSafeInteger(key)) throw new DatasetError(`${at}: "key" must be an integer, got ${JSON.stringify(key)}`);
    if (typeof prompt !== 'string') throw new DatasetError(`${at}: "prompt" must be a string`);
    if (!Array.isArray(ids)) throw new DatasetError(`${at}: "instruction_id_list" must be a list`);
    if (!Array.isArray(kwargs)) throw new DatasetError(`${at}: "kwargs" must be a list`);
    if (kwargs.length !== ids.length) {
      throw new DatasetError(`${at}: ${ids.length} instruction ids but ${kwargs.length} kwargs objects`);
    }
    const seen = keyLines.get(key as number);
    if (seen !== undefined) throw new DatasetError(`${at}: duplicate key ${key} (first on line ${seen})`);
    keyLines.set(key as number, line);
    const cleanKwargs: Record<string, unknown>[] = [];
    ids.forEach((id: unknown, i) => {
      if (!isInstructionId(id)) throw new DatasetError(`${at}: unknown instruction id ${JSON.stringify(id)}`);
      const kw: unknown = kwargs[i];
      if (!isPlainObject(kw)) throw new DatasetError(`${at}: kwargs[${i}] for ${id} must be an object`);
      try {
        buildChecker(id, kw);
      } catch (e) {
        if (e instanceof KwargsError) throw new DatasetError(`${at}: key ${key}: ${e.message}`);
        throw e;
      }
      cleanKwargs.push(Object.fromEntries(Object.entries(kw).filter(([, v]) => v !== null)));
    });
    records.push({ key: key as number, prompt, instruction_id_list: ids as InstructionId[], kwargs: cleanKwargs });
  }
  return records;
}

/**
 * Parses a responses file: rows `{"prompt", "response"}` (other fields ignored), returned as prompt → response.
 * A prompt given twice is an error (the reference would silently keep the last). Throws DatasetError.
 */
export function parseResponses(text: string, file: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = new Map<string, number>();
  for (const { line, value } of jsonlRows(text, file)) {
    const at = `${file}:${line}`;
    if (!isPlainObject(value)) throw new DatasetError(`${at}: a row must be a JSON object`);
    if (typeof value.prompt !== 'string') throw new DatasetError(`${at}: "prompt" must be a string`);
    if (typeof value.response !== 'string') throw new DatasetError(`${at}: "response" must be a string`);
    const seen = lines.get(value.prompt);
    if (seen !== undefined) throw new DatasetError(`${at}: duplicate prompt (first on line ${seen})`);
    lines.set(value.prompt, line);
    out.set(value.prompt, value.response);
  }
  return out;
}
