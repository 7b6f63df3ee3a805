import { resolvePunktDir } from '../../../evals/ifeval/node/punkt-dir.js';
import { scoreFiles } from '../../../evals/ifeval/node/score-files.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { REPO_ROOT } from '../../node/app-root.js';
import { dataDirOption, parseCommandArgs } from '../command-args.js';

export const summary = 'score IFEval responses (strict + loose) and write eval_results_*.jsonl, summary.json and findings.jsonl';

const USAGE =
  'usage: horizon score --input INPUT.jsonl --responses RESPONSES.jsonl --out DIR [--explain] [--punkt DIR] [--data-dir DIR] [--no-official-check]\n' +
  '  --input              IFEval input_data.jsonl (a 541-row file must be the official one, sha256-checked)\n' +
  '  --responses          JSONL rows {"prompt", "response"}, matched to the input by prompt text\n' +
  '  --out                folder for eval_results_strict.jsonl, eval_results_loose.jsonl, summary.json, findings.jsonl\n' +
  '  --explain            list each instruction that fails strict with what decided it (and the loose variant that passed)\n' +
  '  --punkt              Punkt English parameters (default <app>/../shared/nltk/punkt_english, else the data folder\'s copy)\n' +
  '  --data-dir           data folder whose Punkt copy is used (default $HORIZON_DATA_DIR or the platform app-data folder)\n' +
  '  --no-official-check  score an edited 541-row input without the sha256 check';


const pct = (x: number): string => `${(x * 100).toFixed(2)}%`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'score',
    USAGE,
    args,
    {
      input: { type: 'string' },
      responses: { type: 'string' },
      out: { type: 'string' },
      punkt: { type: 'string' },
      'data-dir': { type: 'string' },
      'no-official-check': { type: 'boolean' },
      explain: { type: 'boolean' },
    },
    { required: ['input', 'responses', 'out'] },
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  const punktDir = resolvePunktDir({ repoRoot: REPO_ROOT, dataCopy: dataLayout.punktDir(dataDirOption(values, defaultDataDir)), ...(values.punkt ? { explicit: values.punkt } : {}) });
  const { report, files, strictFailures } = await scoreFiles({
    input: values.input,
    responses: values.responses,
    outDir: values.out,
    punktDir,
    expectOfficial: values['no-official-check'] ? false : 'auto',
    explain: values.explain === true,
  });
  const s = report.summary;
  console.log(`scored ${s.promptsScored} prompts, ${s.instructionsScored} instructions`);
  if (s.promptsScored === 0) {
    console.log('no prompts scored: no accuracies (not 0%)');
  } else {
    console.log(`prompt-level:      strict ${pct(s.promptLevelStrictAccuracy)}  loose ${pct(s.promptLevelLooseAccuracy)}`);
    console.log(`instruction-level: strict ${pct(s.instructionLevelStrictAccuracy)}  loose ${pct(s.instructionLevelLooseAccuracy)}`);
  }
  if (s.missing.length > 0) {
    console.log(`missing responses (${s.missing.length}, not scored): keys ${s.missing.map((m) => m.key).join(', ')}`);
  }
  if (s.unmatchedResponsePrompts.length > 0) {
    console.log(`responses whose prompt is not in the input (${s.unmatchedResponsePrompts.length}, ignored)`);
  }
  if (strictFailures) {
    console.log(`instructions that fail strict (${strictFailures.length}): key, instruction, what decided it`);
    for (const f of strictFailures) {
      const loose = f.findings.looseVariant === null ? 'loose fails too' : `loose passes ${f.findings.looseVariant}: ${f.findings.loose.detail}`;
      console.log(`  ${f.key}  ${f.instructionId}  ${f.findings.strict.detail}; ${loose}`);
    }
  }
  console.log(`wrote ${files.strict}\n      ${files.loose}\n      ${files.summary}\n      ${files.findings}`);
  return 0;
}
