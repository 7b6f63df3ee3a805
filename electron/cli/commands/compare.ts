import path from 'node:path';

import type { CutCount, PairedComparison } from '../../common/ipc-contract.js';
import { divergence } from '../../common/divergence.js';
import { compareCampaigns, type PerfCampaignDetail, type PerfComparison } from '../../common/perf-campaign.js';
import { describeLevel } from '../../common/paired-stats.js';
import { validLabel } from '../../common/label.js';
import type { PairedLevel } from '../../common/paired-stats.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { PerfRepo } from '../../main/db/perf-repo.js';
import { isPerfZip, verifyPerfZip } from '../../main/export/perf-zip.js';
import { readZipEntries, verifyResultZip } from '../../main/export/verify-result-zip.js';
import { zipCutCount, zipSubject } from '../../main/export/zip-subject.js';
import { compareResponses } from '../../main/services/run-compare.js';
import type { ComparableResponse } from '../../main/services/run-compare.js';
import { indent, namedRun, verdictWord } from '../cli-text.js';
import { dataDirOption, keyOption, parseCommandArgs, usageError } from '../command-args.js';
import { openStoredRuns } from '../stored-runs.js';
import { loadVerifierInputs } from '../verifier-inputs.js';
import type { VerifierInputs } from '../verifier-inputs.js';

export const summary = 'compare two runs over the prompts both scored (paired counts, McNemar p, bootstrap interval), or two campaigns';

const USAGE = `usage: horizon compare A B [--key K] [--json] [--db FILE] [--data-dir DIR] [--punkt DIR]
  A, B        stored runs (horizon export --list lists them) or result ZIPs (names ending in .zip, from this machine or
              another); a ZIP is verified first (as horizon verify does) and compared by its re-scored verdicts;
              B is read as the change from A. Or two performance campaigns, stored (by id) or campaign ZIPs (verified
              first): each configuration's decode rate and TTFT p50 side by side, B over A with its 95% interval
              (a seeded bootstrap over the prompts both measured and each side's blocks)
  --key K     one prompt's two responses instead: their verdicts, the words both share and each side's text from
              the word where they part (--json: {key, prompt, a, b, divergence})
  --json      print {runA, runB, labelA, labelB, cutA, cutB, common, promptStrict, promptLoose, instructionStrict,
              instructionLoose, identicalResponses, instructionMismatches, byInstructionType, changed} as JSON;
              cutA/B: {cut, of, maxNewTokens}, the run's responses cut at max new tokens (null: a ZIP that does not
              say)
  --db        SQLite file (default <data dir>/runmap.sqlite)
  --data-dir  data folder (default $HORIZON_DATA_DIR or the platform app-data folder)
  --punkt     Punkt English parameters for re-scoring a ZIP (default as horizon verify)`;

const isZipName = (s: string) => s.toLowerCase().endsWith('.zip');

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const signedPct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;

function levelLine(name: string, l: PairedLevel): string {
  return (
    `  ${name.padEnd(18)} n ${String(l.n).padStart(4)}  A ${pct(l.accuracyA).padStart(6)}  B ${pct(l.accuracyB).padStart(6)}  ` +
    `B-A ${signedPct(l.delta).padStart(6)} pt [${signedPct(l.ci95[0])}, ${signedPct(l.ci95[1])}]  ` +
    `both pass ${l.bothPass}, regressions ${l.regressions}, improvements ${l.improvements}, both fail ${l.bothFail}  ` +
    `McNemar p ${l.pValue < 0.001 ? '< 0.001' : l.pValue.toFixed(3)}`
  );
}

const cutText = (c: CutCount | null) => (c === null ? 'not recorded' : `${c.cut.toLocaleString('en-US')} of ${c.of.toLocaleString('en-US')} at ${c.maxNewTokens.toLocaleString('en-US')}`);

/** The paired statistics in lines, with each run's responses cut at max new tokens when given (as History's row). */
export function formatComparison(runA: string, runB: string, stats: PairedComparison, cut?: readonly [CutCount | null, CutCount | null]): string {
  const unitsA = stats.promptStrict.n;
  const typeWidth = Math.max(0, ...stats.byInstructionType.map((t) => t.instructionId.length));
  return [
    `A ${runA}  ->  B ${runB}: ${stats.common} prompts scored in both (${stats.identicalResponses} with identical responses)`,
    ...(cut === undefined ? [] : [`  cut at max new tokens (whole run): A ${cutText(cut[0])}, B ${cutText(cut[1])}`]),
    levelLine('prompt strict', stats.promptStrict),
    levelLine('prompt loose', stats.promptLoose),
    levelLine('instruction strict', stats.instructionStrict),
    levelLine('instruction loose', stats.instructionLoose),
    ...(stats.instructionMismatches > 0
      ? [`  ${stats.instructionMismatches} common prompts have other instruction lists in the two runs; left out of the instruction levels`]
      : []),
    `reading (prompt strict): ${unitsA === 0 ? 'no prompt was scored in both runs' : describeLevel(stats.promptStrict)}`,
    ...(stats.byInstructionType.length > 0 ? ['instruction-level strict by type, over the same prompts:'] : []),
    ...stats.byInstructionType.map(
      (t) =>
        `  ${t.instructionId.padEnd(typeWidth)}  n ${String(t.n).padStart(4)}  A ${pct(t.strictA / t.n).padStart(6)}  B ${pct(t.strictB / t.n).padStart(6)}  ` +
        `regressions ${t.strictRegressions}, improvements ${t.strictImprovements}`,
    ),
  ].join('\n');
}

const indented = (text: string) => indent(text === '' ? '(nothing)' : text);

/** One prompt's two responses: each instruction's verdicts, then what both say and where each goes its own way. */
export function formatPair(a: ComparableResponse, b: ComparableResponse, d: ReturnType<typeof divergence>): string {
  const sameList = a.verdicts.length === b.verdicts.length && a.verdicts.every((v, i) => v.instructionId === b.verdicts[i]!.instructionId);
  const verdictLines = sameList
    ? a.verdicts.map((v, i) => {
        const w = b.verdicts[i]!;
        return `  ${v.instructionId}  strict ${verdictWord(v.strict)} -> ${verdictWord(w.strict)}  loose ${verdictWord(v.loose)} -> ${verdictWord(w.loose)}`;
      })
    : ['  (the two runs list other instructions for this prompt)'];
  return [
    `#${a.key}: A strict ${verdictWord(a.strictPass)}, loose ${verdictWord(a.loosePass)}  ->  B strict ${verdictWord(b.strictPass)}, loose ${verdictWord(b.loosePass)}`,
    'instructions (A -> B):',
    ...verdictLines,
    'prompt:',
    indented(a.prompt),
    ...(d === null
      ? ['the two responses are the same text:', indented(a.response)]
      : [
          ...(d.words === 0 ? ['the responses differ from their first word'] : [`both responses start with these ${d.words === 1 ? 'word' : `${d.words} words`}:`, indented(a.response.slice(0, d.at).trimEnd())]),
          `A${d.words === 0 ? '' : ' from there'}:`,
          indented(a.response.slice(d.at)),
          `B${d.words === 0 ? '' : ' from there'}:`,
          indented(b.response.slice(d.at)),
        ]),
  ].join('\n');
}

type Side =
  | { readonly kind: 'run'; readonly rows: readonly ComparableResponse[]; readonly label: string | null; readonly cut: CutCount | null }
  | { readonly kind: 'campaign'; readonly campaign: PerfCampaignDetail };

/** A verified ZIP as one side: a result ZIP's re-scored responses or a campaign ZIP's campaign; null after saying why not. */
async function zipSide(file: string, inputs: () => Promise<VerifierInputs>): Promise<Side | null> {
  const entries = await readZipEntries(path.resolve(file));
  const notVerified = (n: number) => {
    console.error(`horizon compare: ${file} is NOT verified (${n} problem${n === 1 ? '' : 's'}; horizon verify ${file} lists them)`);
    return null;
  };
  if (isPerfZip(entries)) {
    const v = await verifyPerfZip(path.resolve(file), entries);
    if (!v.read || !v.aggregates) return notVerified(v.problems.length);
    const { label, ...campaign } = v.read.campaign;
    return { kind: 'campaign', campaign: { ...campaign, label: validLabel(label), requests: v.read.requests, aggregates: v.aggregates, imported: null } };
  }
  const { tools, verifyOptions } = await inputs();
  const r = await verifyResultZip(path.resolve(file), tools, { ...verifyOptions, entries });
  if (!r.verified || !r.responses) return notVerified(r.problems.length);
  return { kind: 'run', rows: r.responses, label: zipSubject(entries)?.subject.label ?? null, cut: zipCutCount(entries) };
}

const rate = (v: number | null | undefined) => (v == null ? '—' : `${v.toFixed(1)} tok/s`);
const ms = (v: number | null | undefined) => (v == null ? '—' : `${v.toFixed(0)} ms`);
/** A ratio with its 95% interval when it has one: "1.10x 1.03-1.17". */
const times = (v: number | null, ci: readonly [number, number] | null) =>
  v === null ? '—' : `${v.toFixed(2)}x${ci === null ? '' : ` ${ci[0].toFixed(2)}-${ci[1].toFixed(2)}`}`;

/** Two campaigns' configurations side by side, then every way they did not measure the same thing. */
export function formatCampaignComparison(a: PerfCampaignDetail, b: PerfCampaignDetail, c: PerfComparison): string {
  const width = Math.max(13, ...c.configs.map((x) => x.label.length));
  const widths = [13, 13, 16, 13, 13, 16];
  const row = (cells: readonly string[]) => `  ${cells[0]!.padEnd(width)}  ${cells.slice(1).map((x, i) => x.padStart(widths[i]!)).join('  ')}`;
  return [
    `A ${namedRun(a.id, a.label)} (${a.deviceLabel})  ->  B ${namedRun(b.id, b.label)} (${b.deviceLabel})`,
    row(['configuration', 'decode A', 'decode B', 'B/A (95%)', 'TTFT p50 A', 'TTFT p50 B', 'B/A (95%)']),
    ...c.configs.map((x) =>
      row([
        x.label,
        x.a ? rate(x.a.decodeTokensPerSecond) : 'not measured',
        x.b ? rate(x.b.decodeTokensPerSecond) : 'not measured',
        times(x.decodeRatio, x.decodeRatioCi95),
        ms(x.a?.ttftMsP50),
        ms(x.b?.ttftMsP50),
        times(x.ttftRatio, x.ttftRatioCi95),
      ]),
    ),
    ...(c.differences.length ? [`not like for like: ${c.differences.join('; ')}`] : []),
  ].join('\n');
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'compare',
    USAGE,
    args,
    { key: { type: 'string' }, json: { type: 'boolean' }, db: { type: 'string' }, 'data-dir': { type: 'string' }, punkt: { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 2) return usageError('compare', USAGE, 'give two runs, A and B (run ids, see horizon export --list, or result ZIPs), or two campaigns');
  const [runA, runB] = positionals as [string, string];
  let key: number | undefined;
  try {
    key = keyOption(values.key);
  } catch (e) {
    return usageError('compare', USAGE, (e as Error).message);
  }
  const dataDir = dataDirOption(values, defaultDataDir);
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  const db = isZipName(runA) && isZipName(runB) ? undefined : openStoredRuns('compare', dbFile);
  if (db === null) return 1;
  try {
    let inputs: Promise<VerifierInputs> | undefined;
    const loadInputs = () => (inputs ??= loadVerifierInputs(dataDir, values.punkt));
    const sides: Side[] = [];
    for (const id of [runA, runB]) {
      if (isZipName(id)) {
        const side = await zipSide(id, loadInputs);
        if (!side) return 1;
        sides.push(side);
        continue;
      }
      const stored = new RunRepo(db!).get(id);
      if (stored) {
        const responses = new ResponseRepo(db!);
        const cut = { cut: responses.endings(id).length, of: responses.count(id), maxNewTokens: stored.policy.maxNewTokens };
        sides.push({ kind: 'run', rows: responses.all(id), label: stored.label, cut });
        continue;
      }
      const campaign = new PerfRepo(db!).get(id);
      if (!campaign) {
        console.error(`horizon compare: no run or campaign ${id} in ${dbFile} (see horizon export --list)`);
        return 1;
      }
      sides.push({ kind: 'campaign', campaign });
    }
    const [a, b] = sides as [Side, Side];
    if (a.kind === 'campaign' || b.kind === 'campaign') {
      if (a.kind !== 'campaign' || b.kind !== 'campaign') {
        console.error(`horizon compare: ${a.kind === 'run' ? runA : runB} is a run and ${a.kind === 'run' ? runB : runA} a campaign: compare runs with runs, campaigns with campaigns`);
        return 1;
      }
      if (key !== undefined) return usageError('compare', USAGE, '--key compares two runs\' responses; campaigns have none');
      const c = compareCampaigns(a.campaign, b.campaign);
      const json = { campaignA: a.campaign.id, campaignB: b.campaign.id, labelA: a.campaign.label, labelB: b.campaign.label, ...c };
      console.log(values.json ? JSON.stringify(json, null, 2) : formatCampaignComparison(a.campaign, b.campaign, c));
      return 0;
    }
    if (key !== undefined) {
      const ra = a.rows.find((r) => r.key === key);
      const rb = b.rows.find((r) => r.key === key);
      if (!ra || !rb) {
        console.error(`horizon compare: ${!ra ? runA : runB} has no response for key ${key}`);
        return 1;
      }
      const d = divergence(ra.response, rb.response);
      const side = (r: ComparableResponse) => ({
        response: r.response, strictPass: r.strictPass, loosePass: r.loosePass,
        verdicts: r.verdicts.map(({ instructionId, strict, loose }) => ({ instructionId, strict, loose })),
      });
      console.log(values.json ? JSON.stringify({ key, prompt: ra.prompt, a: side(ra), b: side(rb), divergence: d }, null, 2) : formatPair(ra, rb, d));
      return 0;
    }
    const { changed, stats } = compareResponses(a.rows, b.rows);
    if (values.json) {
      console.log(JSON.stringify({ runA, runB, labelA: a.label, labelB: b.label, cutA: a.cut, cutB: b.cut, ...stats, changed }, null, 2));
    } else {
      console.log(formatComparison(namedRun(runA, a.label), namedRun(runB, b.label), stats, [a.cut, b.cut]));
      const keys = (cs: typeof changed) => cs.map((c) => `#${c.key}`).join(', ');
      const regressions = changed.filter((c) => c.a.strict && !c.b.strict);
      const improvements = changed.filter((c) => !c.a.strict && c.b.strict);
      if (regressions.length > 0) console.log(`strict regressions (A passes, B fails): ${keys(regressions)}`);
      if (improvements.length > 0) console.log(`strict improvements (A fails, B passes): ${keys(improvements)}`);
    }
    return 0;
  } finally {
    db?.close();
  }
}
