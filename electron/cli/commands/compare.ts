import path from 'node:path';

import type { PairedComparison } from '../../common/ipc-contract.js';
import { describeLevel } from '../../common/paired-stats.js';
import type { PairedLevel } from '../../common/paired-stats.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { isPerfZip } from '../../main/export/perf-zip.js';
import { readZipEntries, verifyResultZip } from '../../main/export/verify-result-zip.js';
import { compareResponses } from '../../main/services/run-compare.js';
import type { ComparableResponse } from '../../main/services/run-compare.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { openStoredRuns } from '../stored-runs.js';
import { loadVerifierInputs } from '../verifier-inputs.js';
import type { VerifierInputs } from '../verifier-inputs.js';

export const summary = 'compare two runs (stored, or result ZIPs) over the prompts both scored: paired counts, McNemar p, bootstrap interval';

const USAGE = `usage: horizon compare A B [--json] [--db FILE] [--data-dir DIR] [--punkt DIR]
  A, B        stored runs (horizon export --list lists them) or result ZIPs (names ending in .zip, from this machine or
              another); a ZIP is verified first (as horizon verify does) and compared by its re-scored verdicts;
              B is read as the change from A
  --json      print {common, promptStrict, promptLoose, instructionStrict, instructionLoose, identicalResponses,
              instructionMismatches, byInstructionType, changed} as JSON
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

export function formatComparison(runA: string, runB: string, stats: PairedComparison): string {
  const unitsA = stats.promptStrict.n;
  const typeWidth = Math.max(0, ...stats.byInstructionType.map((t) => t.instructionId.length));
  return [
    `A ${runA}  ->  B ${runB}: ${stats.common} prompts scored in both (${stats.identicalResponses} with identical responses)`,
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

/** A verified result ZIP's re-scored responses, or null after saying on stderr why it cannot be compared. */
async function zipResponses(file: string, inputs: VerifierInputs): Promise<readonly ComparableResponse[] | null> {
  const entries = await readZipEntries(path.resolve(file));
  if (isPerfZip(entries)) {
    console.error(`horizon compare: ${file} is a performance campaign ZIP (horizon perf), not a result ZIP`);
    return null;
  }
  const r = await verifyResultZip(path.resolve(file), inputs.tools, { ...inputs.verifyOptions, entries });
  if (!r.verified || !r.responses) {
    const n = r.problems.length;
    console.error(`horizon compare: ${file} is NOT verified (${n} problem${n === 1 ? '' : 's'}; horizon verify ${file} lists them)`);
    return null;
  }
  return r.responses;
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'compare',
    USAGE,
    args,
    { json: { type: 'boolean' }, db: { type: 'string' }, 'data-dir': { type: 'string' }, punkt: { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 2) return usageError('compare', USAGE, 'give two runs, A and B: run ids (see horizon export --list) or result ZIPs');
  const [runA, runB] = positionals as [string, string];
  const dataDir = dataDirOption(values, defaultDataDir);
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  const db = isZipName(runA) && isZipName(runB) ? undefined : openStoredRuns('compare', dbFile);
  if (db === null) return 1;
  try {
    let inputs: VerifierInputs | undefined;
    const sides: (readonly ComparableResponse[])[] = [];
    for (const id of [runA, runB]) {
      if (isZipName(id)) {
        inputs ??= await loadVerifierInputs(dataDir, values.punkt);
        const rows = await zipResponses(id, inputs);
        if (!rows) return 1;
        sides.push(rows);
        continue;
      }
      if (!new RunRepo(db!).get(id)) {
        console.error(`horizon compare: run ${id} not found in ${dbFile} (see horizon export --list)`);
        return 1;
      }
      sides.push(new ResponseRepo(db!).all(id));
    }
    const { changed, stats } = compareResponses(sides[0]!, sides[1]!);
    if (values.json) {
      console.log(JSON.stringify({ runA, runB, ...stats, changed }, null, 2));
    } else {
      console.log(formatComparison(runA, runB, stats));
      const regressions = changed.filter((c) => c.a.strict && !c.b.strict);
      if (regressions.length > 0) {
        console.log(`strict regressions (A passes, B fails): ${regressions.map((c) => `#${c.key}`).join(', ')}`);
      }
    }
    return 0;
  } finally {
    db?.close();
  }
}
