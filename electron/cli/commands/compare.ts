import path from 'node:path';

import type { PairedComparison } from '../../common/ipc-contract.js';
import { describeLevel } from '../../common/paired-stats.js';
import type { PairedLevel } from '../../common/paired-stats.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { compareResponses } from '../../main/services/run-compare.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { openStoredRuns } from '../stored-runs.js';

export const summary = 'compare two stored runs over the prompts both scored: paired counts, McNemar p, bootstrap interval';

const USAGE = `usage: horizon compare RUN_A RUN_B [--json] [--db FILE] [--data-dir DIR]
  RUN_A, RUN_B  stored runs (horizon export --list lists them); B is read as the change from A
  --json        print {common, promptStrict, promptLoose, instructionStrict, instructionLoose, identicalResponses,
                instructionMismatches, byInstructionType, changed} as JSON
  --db          SQLite file (default <data dir>/runmap.sqlite)
  --data-dir    data folder (default $HORIZON_DATA_DIR or the platform app-data folder)`;

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

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'compare',
    USAGE,
    args,
    { json: { type: 'boolean' }, db: { type: 'string' }, 'data-dir': { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 2) return usageError('compare', USAGE, 'give two run ids, RUN_A and RUN_B (see horizon export --list)');
  const [runA, runB] = positionals as [string, string];
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDirOption(values, defaultDataDir)));
  const db = openStoredRuns('compare', dbFile);
  if (!db) return 1;
  try {
    const runs = new RunRepo(db);
    for (const id of [runA, runB]) {
      if (!runs.get(id)) {
        console.error(`horizon compare: run ${id} not found in ${dbFile} (see horizon export --list)`);
        return 1;
      }
    }
    const responses = new ResponseRepo(db);
    const { changed, stats } = compareResponses(responses.all(runA), responses.all(runB));
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
    db.close();
  }
}
