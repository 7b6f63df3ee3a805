// `horizon score` end to end on a 20-prompt slice of the official set with the GPT-4 responses.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it, vi } from 'vitest';

import { run } from '../../../../../electron/cli/commands/score.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { resolvePunktDir } from '../../../../../evals/ifeval/node/punkt-dir.js';

const REPO = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..');
const SHARED = path.resolve(REPO, '..', 'shared');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'horizon-score-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const input = path.join(tmp, 'input.jsonl');
writeFileSync(input, readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8').split('\n').slice(0, 20).join('\n'));
const responses = path.join(SHARED, 'ifeval', 'parity', 'gpt4_responses.jsonl');

describe('horizon score', () => {
  it('writes the reference-format results and a summary', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const out = path.join(tmp, 'out');
    expect(await run(['--input', input, '--responses', responses, '--out', out])).toBe(0);
    const printed = log.mock.calls.map((c) => String(c[0])).join('\n');
    log.mockRestore();
    expect(printed).toMatch(/^scored 20 prompts, \d+ instructions\nprompt-level: {6}strict \d+\.\d\d% {2}loose \d+\.\d\d%\ninstruction-level: strict \d+\.\d\d% {2}loose \d+\.\d\d%\n/);
    expect(printed).toContain('responses whose prompt is not in the input (521, ignored)');
    expect(printed).not.toContain('missing responses');
    expect(printed).toContain(`wrote ${path.join(out, 'eval_results_strict.jsonl')}`);
    expect(readdirSync(out).sort()).toEqual(['eval_results_loose.jsonl', 'eval_results_strict.jsonl', 'findings.jsonl', 'summary.json']);
    const strict = readFileSync(path.join(out, 'eval_results_strict.jsonl'), 'utf8').trimEnd().split('\n');
    expect(strict).toHaveLength(20);
    expect(Object.keys(JSON.parse(strict[0]!))).toEqual([
      'follow_all_instructions',
      'follow_instruction_list',
      'instruction_id_list',
      'prompt',
      'response',
    ]);
    const summary = JSON.parse(readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(summary.promptsScored).toBe(20);
    expect(summary.missing).toEqual([]);
    expect(summary.unmatchedResponsePrompts).toHaveLength(521);
    expect(summary.promptLevelLooseAccuracy).toBeGreaterThanOrEqual(summary.promptLevelStrictAccuracy);
  });

  it('lists the instructions that fail strict with what decided them under --explain', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await run(['--input', input, '--responses', responses, '--out', path.join(tmp, 'out-explain'), '--explain'])).toBe(0);
    const printed = log.mock.calls.map((c) => String(c[0]));
    log.mockRestore();
    const header = printed.findIndex((l) => l.startsWith('instructions that fail strict ('));
    const count = Number(/\((\d+)\)/.exec(printed[header] ?? '')?.[1]);
    expect(count).toBeGreaterThan(0);
    const lines = printed.slice(header + 1, header + 1 + count);
    // Counted independently with Python's re.findall(r"\w+", ...) and str.count(",") on the GPT-4 responses.
    expect(lines).toContain('  1000  length_constraints:number_words  288 words; needs at least 300; loose fails too');
    expect(lines).toContain('  1001  punctuation:no_comma  36 commas; needs none; loose fails too');
    expect(lines.every((l) => /^ {2}\d+ {2}[a-z_]+:[a-z_]+ {2}.+; loose (fails too|passes .+)$/.test(l))).toBe(true);
    const summary = JSON.parse(readFileSync(path.join(tmp, 'out-explain', 'summary.json'), 'utf8'));
    expect(count).toBe(summary.instructionsScored - summary.instructionsFollowedStrict);
    // findings.jsonl says the same, a line per scored prompt in input order.
    const findings = readFileSync(path.join(tmp, 'out-explain', 'findings.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as {
      key: number;
      instructions: { id: string; strict: { follows: boolean; finding: string }; loose: { follows: boolean; variant: string | null } }[];
    });
    expect(findings.map((f) => f.key)).toEqual(summary.keys);
    expect(findings[0]!.instructions.find((i) => i.id === 'length_constraints:number_words')).toEqual({
      id: 'length_constraints:number_words',
      strict: { follows: false, finding: '288 words; needs at least 300' },
      loose: { follows: false, finding: '288 words; needs at least 300', variant: null },
    });
    expect(findings[1]!.instructions[0]!.strict).toEqual({ follows: false, finding: '36 commas; needs none' });
    expect(findings.flatMap((f) => f.instructions).filter((i) => !i.strict.follows)).toHaveLength(count);
  });

  it('says no prompt was scored instead of printing 0% when no response matches the input', async () => {
    const none = path.join(tmp, 'none.jsonl');
    writeFileSync(none, `${JSON.stringify({ prompt: 'a prompt not in the input', response: 'x' })}\n`);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await run(['--input', input, '--responses', none, '--out', path.join(tmp, 'out-none'), '--no-official-check'])).toBe(0);
    const printed = log.mock.calls.map((c) => String(c[0])).join('\n');
    log.mockRestore();
    expect(printed).toContain('scored 0 prompts');
    expect(printed).toContain('no prompts scored: no accuracies (not 0%)');
    expect(printed).not.toMatch(/strict 0\.00%/);
  });

  it('refuses an empty input or responses file, naming it, and writes no results', async () => {
    const empty = path.join(tmp, 'empty.jsonl');
    writeFileSync(empty, '');
    const responses = path.join(tmp, 'one.jsonl');
    writeFileSync(responses, `${JSON.stringify({ prompt: 'p', response: 'x' })}\n`);
    const out = path.join(tmp, 'out-empty');
    await expect(run(['--input', empty, '--responses', responses, '--out', out, '--no-official-check'])).rejects.toThrow(`${empty}: no prompt rows (the file is empty)`);
    await expect(run(['--input', input, '--responses', empty, '--out', out, '--no-official-check'])).rejects.toThrow(`${empty}: no response rows (the file is empty)`);
    expect(existsSync(path.join(out, 'summary.json'))).toBe(false);
  });

  it('names the prompts that have no response', async () => {
    const some = path.join(tmp, 'some.jsonl');
    const rows = readFileSync(input, 'utf8').split('\n').slice(0, 18).map((l) => JSON.parse(l) as { key: number; prompt: string });
    writeFileSync(some, rows.map((r) => JSON.stringify({ prompt: r.prompt, response: 'ok' })).join('\n'));
    const keys = readFileSync(input, 'utf8').split('\n').slice(18).map((l) => (JSON.parse(l) as { key: number }).key);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await run(['--input', input, '--responses', some, '--out', path.join(tmp, 'out-some')])).toBe(0);
    const printed = log.mock.calls.map((c) => String(c[0])).join('\n');
    log.mockRestore();
    expect(printed).toContain(`scored 18 prompts`);
    expect(printed).toContain(`missing responses (2, not scored): keys ${keys.join(', ')}`);
    expect(printed).not.toContain('responses whose prompt is not in the input');
  });

  it('scores an edited 541-row input only with --no-official-check', async () => {
    const lines = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8').trimEnd().split('\n');
    const first = JSON.parse(lines[0]!) as { prompt: string };
    lines[0] = JSON.stringify({ ...first, prompt: `${first.prompt} (edited)` });
    const edited = path.join(tmp, 'edited.jsonl');
    writeFileSync(edited, `${lines.join('\n')}\n`);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      await expect(run(['--input', edited, '--responses', responses, '--out', path.join(tmp, 'out-edited')])).rejects.toThrow();
      expect(await run(['--input', edited, '--responses', responses, '--out', path.join(tmp, 'out-edited'), '--no-official-check'])).toBe(0);
    } finally {
      log.mockRestore();
    }
  });

  it('answers a usage error with status 2', async () => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(await run(['--input', input])).toBe(2);
    expect(await run(['--bogus'])).toBe(2);
    expect(err.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(/--input, --responses and --out are required/);
    err.mockRestore();
  });

  it('names the places it looked for the Punkt parameters', () => {
    expect(resolvePunktDir({ repoRoot: REPO })).toBe(path.join(SHARED, 'nltk', 'punkt_english'));
    // A repo root whose parent has no shared/ folder (tmp's own parent might).
    const lonelyRoot = path.join(tmp, 'no-shared-here', 'repo');
    expect(() => resolvePunktDir({ repoRoot: lonelyRoot })).toThrow(/not found \(looked in [^,]*punkt_english\)/);
    expect(() => resolvePunktDir({ repoRoot: lonelyRoot, dataCopy: dataLayout.punktDir('/nowhere') })).toThrow(
      /looked in .*, \/nowhere\/assets\/nltk\/punkt_english\)/,
    );
    // Where `horizon assets --import-punkt` puts it.
    const dataDir = path.join(tmp, 'data');
    const imported = path.join(dataDir, 'assets', 'nltk', 'punkt_english');
    cpSync(path.join(SHARED, 'nltk', 'punkt_english'), imported, { recursive: true });
    expect(resolvePunktDir({ repoRoot: lonelyRoot, dataCopy: dataLayout.punktDir(dataDir) })).toBe(imported);
  });
});
