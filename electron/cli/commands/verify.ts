import path from 'node:path';

import { cutSentence, describeZipSubject } from '../../common/zip-subject.js';
import { defaultDataDir } from '../../main/data-dir.js';
import { isPerfZip, verifyPerfZip } from '../../main/export/perf-zip.js';
import { readZipEntries, verifyResultZip } from '../../main/export/verify-result-zip.js';
import { zipCutCount, zipSubject } from '../../main/export/zip-subject.js';
import { formatAccuracies } from '../../main/jobs/run-accuracies.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { loadVerifierInputs } from '../verifier-inputs.js';
import { qualitySummary } from '../../common/quality-summary.js';

export const summary = 'check a result or campaign ZIP: every sha256, then re-score the responses (or recompute the campaign)';

const USAGE = `usage: horizon verify RESULT.zip|CAMPAIGN.zip [--json] [--punkt DIR] [--data-dir DIR]
  A campaign ZIP (horizon perf) is checked by its hashes and every aggregate recomputed from its requests.
  --json      print {file, kind, verified, problems, subject, cut, unchecked, accuracies, run} as JSON (kind: result
              or campaign; subject: the run or campaign the ZIP says it holds, null when its manifest cannot be read;
              cut: {cut, of, maxNewTokens}, its responses cut at max new tokens, null when the ZIP does not say; the
              last four for a result ZIP only); the exit status is the same
  --punkt     Punkt English parameters (default <app>/../shared/nltk/punkt_english, else the data folder's copy)
  --data-dir  data folder whose eval assets are used (default $HORIZON_DATA_DIR or the platform app-data folder)
The official IFEval input_data.jsonl, which the rows of a partial official run are compared with, is looked for in
<app>/../shared/ifeval and in the data folder's copy (<app>: where Horizon RunMap is installed).`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'verify',
    USAGE,
    args,
    { json: { type: 'boolean' }, punkt: { type: 'string' }, 'data-dir': { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) return usageError('verify', USAGE, 'give exactly one RESULT.zip');
  const entries = await readZipEntries(path.resolve(file));
  const described = zipSubject(entries);
  const subject = described?.subject ?? null;
  // What the ZIP says it holds, under the verdict's first line: the verdict vouches for its contents, not these words.
  const printSubject = () => {
    if (described) console.log(`  the ZIP says: ${describeZipSubject(described.kind, described.subject, (iso) => iso)}`);
  };
  if (isPerfZip(entries)) {
    const perf = await verifyPerfZip(path.resolve(file), entries);
    if (values.json) {
      console.log(JSON.stringify({ file, kind: 'campaign', verified: perf.verified, problems: perf.problems, subject }, null, 2));
      return perf.verified ? 0 : 1;
    }
    if (perf.verified) {
      console.log(`verified ${file} (performance campaign)`);
      printSubject();
      return 0;
    }
    console.log(`NOT verified ${file}: ${perf.problems.length} problem${perf.problems.length === 1 ? '' : 's'}`);
    printSubject();
    for (const p of perf.problems) console.log(`  - ${p}`);
    return 1;
  }
  const { tools, verifyOptions, officialCandidates } = await loadVerifierInputs(dataDirOption(values, defaultDataDir), values.punkt);
  const report = await verifyResultZip(path.resolve(file), tools, { ...verifyOptions, entries });
  const cut = zipCutCount(entries);
  if (values.json) {
    const { verified, problems, unchecked, accuracies, run, quality } = report;
    console.log(JSON.stringify({ file, kind: 'result', verified, problems, subject, cut, unchecked, accuracies, run: run ?? null, quality: quality ?? null }, null, 2));
    return verified ? 0 : 1;
  }
  const printCut = () => {
    if (cut && cut.of > 0) console.log(`  ${cutSentence(cut)}`);
  };
  const printUnchecked = () => {
    for (const u of report.unchecked) console.log(`unchecked: ${u}`);
    if (report.unchecked.length > 0 && verifyOptions.officialInputText === undefined) {
      console.log(`  (looked for it in ${officialCandidates.join(', ')}; 'npx horizon assets' fetches it into the data folder)`);
    }
  };
  if (report.verified) {
    console.log(`verified ${file}`);
    printSubject();
    printCut();
    printUnchecked();
    if (report.run && (report.run.status !== 'completed' || report.run.responses < report.run.total)) {
      console.log(`note: a ${report.run.status} run: ${report.run.responses} of its ${report.run.total} prompts`);
    }
    console.log(report.accuracies ? formatAccuracies(report.accuracies) : 'no prompts scored');
    if (report.quality) console.log(`carried, not re-checked (that needs the model): ${qualitySummary(report.quality)}`);
    return 0;
  }
  console.log(`NOT verified ${file}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}`);
  printSubject();
  printCut();
  for (const p of report.problems) console.log(`  - ${p}`);
  printUnchecked();
  return 1;
}
