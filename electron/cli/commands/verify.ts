import path from 'node:path';

import { loadTextTools } from '../../../evals/ifeval/node/load-text-tools.js';
import { resolvePunktDir } from '../../../evals/ifeval/node/punkt-dir.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { verifyResultZip } from '../../main/export/verify-result-zip.js';
import { formatAccuracies } from '../../main/jobs/run-accuracies.js';
import { REPO_ROOT } from '../../node/app-root.js';
import { parseCommandArgs, usageError } from '../command-args.js';

export const summary = 'check a result ZIP: every sha256, then re-score its responses and compare with its results';

const USAGE = `usage: horizon verify RESULT.zip [--punkt DIR]
  --punkt  Punkt English parameters (default ../shared/nltk/punkt_english, else the data folder's copy)`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('verify', USAGE, args, { punkt: { type: 'string' } }, { positionals: true });
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) return usageError('verify', USAGE, 'give exactly one RESULT.zip');
  const punktDir = resolvePunktDir({ repoRoot: REPO_ROOT, dataCopy: dataLayout.punktDir(defaultDataDir()), ...(values.punkt ? { explicit: values.punkt } : {}) });
  const tools = await loadTextTools({ punktDir });
  const report = await verifyResultZip(path.resolve(file), tools);
  if (report.verified) {
    console.log(`verified ${file}`);
    if (report.run && report.run.status !== 'completed') {
      console.log(`note: a ${report.run.status} run: ${report.run.responses} of its ${report.run.total} prompts`);
    }
    if (report.accuracies) console.log(formatAccuracies(report.accuracies));
    return 0;
  }
  console.log(`NOT verified ${file}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}`);
  for (const p of report.problems) console.log(`  - ${p}`);
  return 1;
}
