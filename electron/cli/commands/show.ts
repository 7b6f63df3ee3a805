import path from 'node:path';

import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import { passRateInterval } from '../../common/accuracy-intervals.js';
import { instructionArgsText } from '../../common/instruction-args.js';
import { ENDING_TEXT, RESPONSE_ENDINGS, type InstructionVerdict, type QualityReport, type ResponseDetail, type ResponseEnding, type RunDetail } from '../../common/ipc-contract.js';
import { qualitySummary } from '../../common/quality-summary.js';
import { weightsLabel } from '../../common/model-ref.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import { PerfRepo } from '../../main/db/perf-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { formatAccuracies, formatIntervals, formatRange } from '../../main/jobs/run-accuracies.js';
import { listModelVariants } from '../../main/services/models-service.js';
import { responseDetail, runDetail, toResponseRow } from '../../main/services/runs-service.js';
import { indent, verdictWord } from '../cli-text.js';
import { dataDirOption, keyOption, parseCommandArgs, usageError } from '../command-args.js';
import { openStoredRuns } from '../stored-runs.js';
import { loadVerifierInputs } from '../verifier-inputs.js';
import { formatFigures } from './eval.js';
import { formatCampaign } from './perf.js';

export const summary = "show a stored run's results, one response with what decided its verdicts, or the failures; or a campaign";

const USAGE = `usage: horizon show RUN_ID [--key K | [--failed strict|loose] [--ending stop|length|cancelled]
                   [--instruction ID]] [--json] [--punkt DIR] [--db FILE] [--data-dir DIR]
       horizon show --campaign CAMPAIGN_ID [--json] [--db FILE] [--data-dir DIR]
  RUN_ID         a stored run, made here or imported (horizon export --list lists them)
                 alone: its model, device, settings, accuracies with their 95% intervals, figures and each
                 instruction's pass counts
  --key K        one response: each instruction's verdicts, strict and loose, with what decided them, then the
                 prompt and the response
  --failed MODE  every response that fails under strict or loose scoring, one line per instruction it fails, with
                 what decided it
  --ending E     the responses that ended so, one line each (stop: ended by the model, length: cut at max new
                 tokens, cancelled); with --failed: only their failures
  --instruction  the responses with that instruction, one line each with its verdicts there and what decided them;
                 with --failed or --ending: only those responses (--failed: failing on it)
  --campaign     a stored performance campaign (measured here or imported; horizon perf --list lists them) as
                 horizon perf prints it: each configuration's decode rate, TTFT, memory, copies and cache counts
  --json         the same as JSON (the app's run detail, response detail, {mode, instructionId, ending, total, failed}
                 or {ending, instructionId, total, responses} with the app's response rows, or the campaign as
                 horizon perf --json prints it)
  --punkt        Punkt English parameters, for what decided each verdict (default <app>/../shared/nltk/punkt_english,
                 else the data folder's copy; without them the verdicts are shown alone)
  --db           SQLite file (default <data dir>/runmap.sqlite)
  --data-dir     data folder (default $HORIZON_DATA_DIR or the platform app-data folder)`;

/** The run as its Results page shows it, in lines. */
export function formatRunDetail(d: RunDetail, figures: string, quality: QualityReport | null = null): string {
  const revision = /^[0-9a-f]{40}$/.test(d.modelRevision) ? d.modelRevision.slice(0, 7) : d.modelRevision;
  const width = Math.max(0, ...d.byInstruction.map((r) => r.instructionId.length));
  const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`.padStart(6);
  return [
    `run ${d.id}${d.label === null ? '' : ` ${JSON.stringify(d.label)}`}`,
    `  status    ${d.status}, ${d.done} of ${d.total} prompts scored${d.error ? ` (${d.error})` : ''}`,
    `  model     ${d.modelRepo} @ ${revision}, ${weightsLabel(d.modelId, d.weights)} (${d.modelId})`,
    `  device    ${d.backendLabel}${d.residency ? `, ${d.residency}` : ''}`,
    ...(d.carriedQuality
      ? [`  quality   ${qualitySummary(d.carriedQuality)}, as the run's result ZIP carried it`]
      : quality
        ? [`  quality   ${qualitySummary(quality)}`]
        : []),
    `  settings  greedy, max new tokens ${d.policy.maxNewTokens}, batch ${d.policy.batch}` +
      (d.policy.expertBudgetBytes === null ? '' : `, GPU expert memory ${(d.policy.expertBudgetBytes / 2 ** 30).toFixed(2)} GiB`) +
      (d.policy.cudaDevice === null ? '' : `, CUDA device ${d.policy.cudaDevice}`),
    `  started   ${d.createdAt}${d.finishedAt ? `, ended ${d.finishedAt}` : ''}`,
    `  endings   ${d.endings.stop} ${ENDING_TEXT.stop}, ${d.endings.length} ${ENDING_TEXT.length} (${d.policy.maxNewTokens})` +
      (d.endings.cancelled > 0 ? `, ${d.endings.cancelled} ${ENDING_TEXT.cancelled}` : ''),
    ...(d.imported ? [`  imported  from ${d.imported.file} at ${d.imported.importedAt}`] : []),
    d.accuracies ? formatAccuracies(d.accuracies) : 'no prompts scored',
    ...(d.intervals ? [formatIntervals(d.intervals)] : []),
    figures,
    ...(d.byInstruction.length > 0 ? ['by instruction (strict, loose, of n; strict 95% interval, as the chart draws it):'] : []),
    ...d.byInstruction.map((r) => {
      const ci = passRateInterval(r.strictPassed, r.count);
      const interval = ci === null ? '' : `  ${formatRange(ci)}`;
      return `  ${r.instructionId.padEnd(width)}  ${pct(r.strictPassed, r.count)}  ${pct(r.loosePassed, r.count)}  n ${String(r.count).padStart(3)}${interval}`;
    }),
  ].join('\n');
}

/** The INT4 check of the run's model, as Results names it: where that model is prepared in the data folder. */
async function modelQuality(dataDir: string, d: RunDetail): Promise<QualityReport | null> {
  if (d.weights !== 'int4' || d.carriedQuality) return null;
  try {
    return (await listModelVariants(dataDir)).find((v) => v.id === d.modelId)?.quality ?? null;
  } catch {
    return null;
  }
}

/** One instruction's verdicts and what decided them, as the response detail lists them. */
function verdictLines(v: InstructionVerdict): string[] {
  const args = instructionArgsText(v.kwargs);
  return [
    `  strict ${verdictWord(v.strict)}  loose ${verdictWord(v.loose)}  ${v.instructionId}${args ? ` (${args})` : ''}`,
    ...(v.finding === null ? [] : [`      ${v.finding}`]),
    ...(v.looseFinding === null ? [] : [`      loose, ${v.looseFinding.variant}: ${v.looseFinding.detail}`]),
  ];
}

/** One response as its detail shows it: verdicts, then the prompt and the response. */
export function formatResponseDetail(r: ResponseDetail): string {
  const timing = [
    `${r.tokens} tokens`,
    ENDING_TEXT[r.finishReason],
    ...(r.ttftMs === null ? [] : [`TTFT ${r.ttftMs.toFixed(0)} ms`]),
    ...(r.decodeTokensPerSecond === null ? [] : [`${r.decodeTokensPerSecond.toFixed(1)} tok/s`]),
  ];
  return [
    `response ${r.key} of run ${r.runId}: strict ${verdictWord(r.strictPass)}, loose ${verdictWord(r.loosePass)}; ${timing.join(', ')}`,
    'instructions:',
    ...r.verdicts.flatMap(verdictLines),
    'prompt:',
    indent(r.prompt),
    'response:',
    indent(r.response === '' ? '(empty)' : r.response),
  ].join('\n');
}

/** A failing response's instructions that fail under `mode` (only `instructionId`'s when given). */
function failing(r: ResponseDetail, mode: 'strict' | 'loose', instructionId: string | undefined): InstructionVerdict[] {
  return r.verdicts.filter((v) => !v[mode] && (instructionId === undefined || v.instructionId === instructionId));
}

/** The text tools for findings, or null after saying on stderr why the verdicts are shown without them. */
async function findingTools(dataDir: string, punkt: string | undefined): Promise<TextTools | null> {
  try {
    return (await loadVerifierInputs(dataDir, punkt)).tools;
  } catch (e) {
    console.error(`horizon show: verdicts shown without what decided them: ${(e as Error).message}`);
    return null;
  }
}

/** What a listing of a run's responses is narrowed to, as the app's Responses filters narrow its list. */
interface ListScope {
  readonly runId: string;
  readonly maxNewTokens: number;
  readonly responses: ResponseRepo;
  readonly instructionId: string | undefined;
  readonly ending: ResponseEnding | undefined;
  readonly json: boolean;
}

const ofThe = (n: number) => `of the ${n} response${n === 1 ? '' : 's'}`;

/** " with <instruction>" and " cut at max new tokens (N)" (or the other endings' words), as the scope has them. */
function scopeWords(s: ListScope): string {
  const ending = s.ending === undefined ? '' : ` ${s.ending === 'length' ? `${ENDING_TEXT.length} (${s.maxNewTokens})` : ENDING_TEXT[s.ending]}`;
  return `${s.instructionId === undefined ? '' : ` with ${s.instructionId}`}${ending}`;
}

const filterOf = (s: ListScope) => ({ instructionId: s.instructionId, finish: s.ending, sortBy: 'position', limit: null }) as const;

/**
 * The responses in scope, one line each: tokens, whether max new tokens cut it, and the verdicts, an instruction's
 * own (with what decided it) when one is given; --json: the app's response rows.
 */
function listResponses(s: ListScope, tools: TextTools | null): number {
  const rows = s.responses.page(s.runId, filterOf(s)).items.map((r) => toResponseRow(r, s.instructionId, tools));
  const total = s.responses.page(s.runId, { instructionId: s.instructionId, limit: 0 }).total;
  if (s.json) {
    console.log(JSON.stringify({ ending: s.ending ?? null, instructionId: s.instructionId ?? null, total, responses: rows }, null, 2));
    return 0;
  }
  const keyWidth = Math.max(0, ...rows.map((r) => String(r.key).length));
  const tokenWidth = Math.max(0, ...rows.map((r) => String(r.tokens).length));
  for (const r of rows) {
    const v = r.instructionVerdict ?? r;
    const cut = s.ending === undefined && r.finishReason === 'length' ? ', cut' : '';
    const finding = r.instructionVerdict?.finding ? `  ${r.instructionVerdict.finding}` : '';
    console.log(`#${String(r.key).padEnd(keyWidth)}  ${String(r.tokens).padStart(tokenWidth)} tokens${cut}  strict ${verdictWord(v.strictPass)}  loose ${verdictWord(v.loosePass)}${finding}`);
  }
  const verdictsOn = s.instructionId === undefined ? '' : ` (verdicts on ${s.instructionId})`;
  console.log(`${rows.length} ${ofThe(total)}${scopeWords(s)}${verdictsOn}; horizon show ${s.runId} --key K shows one`);
  return 0;
}

/** The responses in scope that fail under `mode`, a line per failing instruction (only the given one's) with its finding. */
function listFailures(s: ListScope, mode: 'strict' | 'loose', tools: TextTools | null): number {
  const considered = s.responses.page(s.runId, { ...filterOf(s), limit: 0 }).total;
  const failed = s.responses.page(s.runId, { ...filterOf(s), verdict: 'fail', mode }).items.map((r) => responseDetail(s.runId, r, tools));
  if (s.json) {
    const rows = failed.map((r) => ({ key: r.key, instructions: failing(r, mode, s.instructionId) }));
    console.log(JSON.stringify({ mode, instructionId: s.instructionId ?? null, ending: s.ending ?? null, total: considered, failed: rows }, null, 2));
    return 0;
  }
  const keyWidth = Math.max(0, ...failed.map((r) => String(r.key).length));
  for (const r of failed) {
    for (const v of failing(r, mode, s.instructionId)) {
      console.log(`#${String(r.key).padEnd(keyWidth)}  ${v.instructionId}${v.finding === null ? '' : `: ${v.finding}`}`);
    }
  }
  const onIt = s.instructionId === undefined ? '' : ' on it';
  console.log(`${failed.length} ${ofThe(considered)}${scopeWords(s)} fail ${mode}${onIt}; horizon show ${s.runId} --key K shows one`);
  return 0;
}

/** A stored campaign as `horizon perf` prints it when it ends. */
function showCampaign(id: string, values: { readonly json?: boolean; readonly db?: string; readonly 'data-dir'?: string }): number {
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDirOption(values, defaultDataDir)));
  const db = openStoredRuns('show', dbFile);
  if (!db) return 1;
  try {
    const campaign = new PerfRepo(db).get(id);
    if (!campaign) {
      console.error(`horizon show: campaign ${id} not found in ${dbFile} (see horizon perf --list)`);
      return 1;
    }
    console.log(values.json ? JSON.stringify(campaign, null, 2) : formatCampaign(campaign));
    return 0;
  } finally {
    db.close();
  }
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'show',
    USAGE,
    args,
    {
      key: { type: 'string' },
      failed: { type: 'string' },
      instruction: { type: 'string' },
      ending: { type: 'string' },
      campaign: { type: 'boolean' },
      json: { type: 'boolean' },
      punkt: { type: 'string' },
      db: { type: 'string' },
      'data-dir': { type: 'string' },
    },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [runId, ...extra] = positionals;
  if (!runId || extra.length > 0) return usageError('show', USAGE, values.campaign ? 'give exactly one CAMPAIGN_ID' : 'give exactly one RUN_ID');
  if (values.campaign) {
    const runView = (['key', 'failed', 'ending', 'instruction'] as const).find((f) => values[f] !== undefined);
    if (runView !== undefined) return usageError('show', USAGE, `--${runView} is about a run's responses; a campaign has none`);
    return showCampaign(runId, values);
  }
  const listing = (['failed', 'ending', 'instruction'] as const).find((f) => values[f] !== undefined);
  if (values.key !== undefined && listing !== undefined) return usageError('show', USAGE, `--key and --${listing} are two views: give one`);
  let key: number | undefined;
  try {
    key = keyOption(values.key);
  } catch (e) {
    return usageError('show', USAGE, (e as Error).message);
  }
  const mode = values.failed;
  if (mode !== undefined && mode !== 'strict' && mode !== 'loose') return usageError('show', USAGE, `--failed takes strict or loose, not ${JSON.stringify(mode)}`);
  const ending = values.ending as ResponseEnding | undefined;
  if (ending !== undefined && !RESPONSE_ENDINGS.includes(ending)) {
    return usageError('show', USAGE, `--ending takes ${RESPONSE_ENDINGS.join(', ')}, not ${JSON.stringify(ending)}`);
  }

  const dataDir = dataDirOption(values, defaultDataDir);
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  const db = openStoredRuns('show', dbFile);
  if (!db) return 1;
  try {
    const stored = new RunRepo(db).get(runId);
    if (!stored) {
      console.error(`horizon show: run ${runId} not found in ${dbFile} (see horizon export --list)`);
      return 1;
    }
    const responses = new ResponseRepo(db);
    if (key === undefined && listing === undefined) {
      const detail = runDetail(stored, responses);
      if (values.json) {
        console.log(JSON.stringify(detail, null, 2));
      } else {
        console.log(formatRunDetail(detail, formatFigures(responses.figures(runId), stored.backend), await modelQuality(dataDir, detail)));
      }
      return 0;
    }
    if (key !== undefined) {
      const r = responses.get(runId, key);
      if (!r) {
        console.error(`horizon show: run ${runId} has no response for key ${key}`);
        return 1;
      }
      const detail = responseDetail(runId, r, await findingTools(dataDir, values.punkt));
      console.log(values.json ? JSON.stringify(detail, null, 2) : formatResponseDetail(detail));
      return 0;
    }
    const only = values.instruction;
    if (only !== undefined && responses.page(runId, { instructionId: only, limit: 0 }).total === 0) {
      console.error(`horizon show: no response of run ${runId} has the instruction ${only}`);
      return 1;
    }
    const list: ListScope = { runId, maxNewTokens: stored.policy.maxNewTokens, responses, instructionId: only, ending, json: values.json === true };
    // Findings need the scorer's text tools: every failure's, and an instruction's in its own listing.
    const tools = mode !== undefined || only !== undefined ? await findingTools(dataDir, values.punkt) : null;
    return mode === undefined ? listResponses(list, tools) : listFailures(list, mode, tools);
  } finally {
    db.close();
  }
}
