import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { parsePromptRecords } from '../../../evals/ifeval/dataset.js';
import { ChatTokenizer } from '../../node/chat-tokenizer.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { resolveRuntimeDir } from '../../main/jobs/model-source.js';
import { packManifestSha256, qualityReportFile, writeQualityReport } from '../../main/prep/quality-report.js';
import type { StoredQualityReport } from '../../main/prep/quality-report.js';
import type { QualityReport } from '../../common/ipc-contract.js';
import { closerSentence, meanKlRatio, q4_0Inputs, ratioRange } from '../../common/quality-summary.js';
import { qualityCheckCpuBatch } from '../../main/jobs/auto-batch.js';
import { loadNativeBinding } from '../../worker/runtime/binding.js';
import { QUALITY_GENERATE_BATCH, qualityCheckContext, runQualityCheck } from '../../worker/runtime/quality-check.js';
import { abortOnSignals, abortWhenOrphaned, dataDirOption, intOption, parseCommandArgs, usageError } from '../command-args.js';

export const summary = 'INT4 against BF16 on the same tokens: top-1 agreement, KL, logit differences, first divergence';

const USAGE = `usage: horizon quality --model DIR [--limit N] [--max-new-tokens N] [--backend cpu|cuda] [--threads N] [--json]
                       [--no-q4-0] [--input FILE] [--data-dir DIR]
  DIR               a prepared model (or a checkpoint folder with its int4-gN/ pack): both weight sets are needed
  --limit           the first N IFEval prompts (default 32)
  --max-new-tokens  length of each INT4 response the comparison runs over (default 128)
  --backend         where the INT4 weights run (default cpu); the BF16 weights always run on the CPU
  --no-q4-0         leave out the point of comparison: the BF16 experts rounded as llama.cpp's Q4_0 rounds them,
                    run over the same tokens on the CPU (a third pass, about as long as the BF16 one)
  --input           IFEval input_data.jsonl (default <data dir>/assets/ifeval/input_data.jsonl)
  --json            print the report as JSON (keys top1Agreement, meanKl, p99Kl, positions, ...)
  --progress-json   one JSON object a line: {"type":"progress",done,total,elapsedMs,etaMs}, then {"type":"done",file,...}
The report is stored beside the model (quality-<int4 folder>.json), where the Models page shows it.`;

/** The Q4_0 point of comparison beside INT4's figures: what users would run instead, on the same tokens. */
export function q4_0Lines(report: QualityReport): string {
  const q = report.q4_0!;
  const ratio = meanKlRatio(report);
  const closer = closerSentence(q);
  return (
    `llama.cpp's Q4_0 on the same experts (${q4_0Inputs(q)}), over the same positions:\n` +
    `  top-1 agreement ${(100 * q.top1Agreement).toFixed(2)}%\n` +
    `  KL(BF16 || Q4_0) mean ${q.meanKl.toExponential(3)} nats, p99 ${q.p99Kl.toExponential(3)}` +
    (ratio === null ? '' : `; INT4's mean KL is ${ratio.toFixed(2)}x Q4_0's`) +
    (q.meanKlRatioCi95 ? ` (95% interval ${ratioRange(q.meanKlRatioCi95)}, prompts resampled)` : '') +
    `\n  mean |logit difference| ${q.meanAbsLogitDiff.toExponential(3)}` +
    (closer ? `\n  ${closer}` : '')
  );
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('quality', USAGE, args, {
    model: { type: 'string' },
    limit: { type: 'string' },
    'max-new-tokens': { type: 'string' },
    backend: { type: 'string' },
    threads: { type: 'string' },
    input: { type: 'string' },
    'data-dir': { type: 'string' },
    json: { type: 'boolean' },
    'no-q4-0': { type: 'boolean' },
    'progress-json': { type: 'boolean' },
  }, { required: ['model'] });
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let limit, maxNewTokens, threads;
  try {
    limit = intOption('limit', values.limit, 1, 541) ?? 32;
    maxNewTokens = intOption('max-new-tokens', values['max-new-tokens'], 1, 4096) ?? 128;
    threads = intOption('threads', values.threads, 1, 1024);
  } catch (e) {
    return usageError('quality', USAGE, (e as Error).message);
  }
  const backend = values.backend ?? 'cpu';
  if (backend !== 'cpu' && backend !== 'cuda') return usageError('quality', USAGE, `--backend must be cpu or cuda, got '${backend}'`);
  const modelDir = path.resolve(values.model!);
  let int4, bf16;
  try {
    int4 = await resolveRuntimeDir(modelDir, 'int4');
    bf16 = await resolveRuntimeDir(modelDir, 'bf16');
  } catch (e) {
    console.error(`horizon quality: ${(e as Error).message}`);
    return 1;
  }
  const input = path.resolve(values.input ?? path.join(dataLayout.ifevalDir(dataDirOption(values, defaultDataDir)), 'input_data.jsonl'));
  let text: string;
  try {
    text = await readFile(input, 'utf8');
  } catch (e) {
    console.error(`horizon quality: ${input}: cannot read the IFEval prompts (${(e as Error).message}); run horizon assets or give --input`);
    return 1;
  }
  const records = parsePromptRecords(text, input).slice(0, limit);
  const tokenizer = await ChatTokenizer.load(int4.dir);
  const prompts = records.map((r) => ({ key: r.key, tokenIds: tokenizer.encodeChat(r.prompt).tokenIds }));
  // The pack as loaded, so that a report outlives no change to it (readPackQuality).
  const manifestSha256 = await packManifestSha256(int4.dir);
  const generateBatch =
    backend === 'cpu'
      ? await qualityCheckCpuBatch({
          int4Dir: int4.dir, bf16Dir: bf16.dir, cpuIsa: loadNativeBinding().probeDevices().cpuIsa,
          contextTokens: qualityCheckContext(prompts, maxNewTokens), floor: QUALITY_GENERATE_BATCH,
        })
      : QUALITY_GENERATE_BATCH;
  const cancel = abortOnSignals(['SIGINT', 'SIGTERM']);
  const stopWatch = values['progress-json'] ? abortWhenOrphaned(() => cancel.abort()) : () => undefined;
  try {
    const report = await runQualityCheck({
      reference: { dir: bf16.dir, weights: 'bf16', backend: 'cpu' },
      candidate: { dir: int4.dir, weights: 'int4', backend },
      prompts,
      maxNewTokens,
      stopTokens: tokenizer.eosTokenIds,
      threads,
      q4_0: !values['no-q4-0'],
      generateBatch,
      signal: cancel.signal,
      onProgress: (p) => {
        if (values['progress-json']) {
          console.log(JSON.stringify({ type: 'progress', ...p }));
          return;
        }
        const eta = p.etaMs === null ? '' : `, about ${Math.ceil(p.etaMs / 1000)} s left`;
        process.stderr.write(`quality: ${p.done}/${p.total} prompts, ${(p.elapsedMs / 1000).toFixed(0)} s${eta}\n`);
      },
    });
    const stored: StoredQualityReport = {
      format: 'horizon-quality-v1',
      createdAt: new Date().toISOString(),
      int4Dir: path.basename(int4.dir),
      packManifestSha256: manifestSha256,
      backend,
      limit,
      maxNewTokens,
      ...report,
    };
    const file = qualityReportFile(modelDir, int4.dir);
    await writeQualityReport(file, stored);
    if (values['progress-json']) {
      console.log(JSON.stringify({ type: 'done', file, top1Agreement: report.top1Agreement, meanKl: report.meanKl }));
    } else if (values.json) {
      console.log(JSON.stringify(stored, null, 2));
    } else {
      console.log(
        `INT4 (${path.basename(int4.dir)}, ${backend}) against BF16 (cpu) over ${report.positions} response positions of ${report.prompts} prompts:\n` +
          `  top-1 agreement ${(100 * report.top1Agreement).toFixed(2)}%\n` +
          `  KL(BF16 || INT4) mean ${report.meanKl.toExponential(3)} nats, p99 ${report.p99Kl.toExponential(3)}\n` +
          `  mean |logit difference| ${report.meanAbsLogitDiff.toExponential(3)}\n` +
          `  greedy decoding on BF16 agrees with the whole INT4 response in ${report.promptsWithoutDivergence} of ${report.prompts} prompts` +
          (report.medianFirstDivergence === null ? '' : `; elsewhere it first differs at response token ${report.medianFirstDivergence} (median)`) +
          (report.q4_0 ? `\n${q4_0Lines(report)}` : '') +
          `\nstored in ${file}`,
      );
    }
    return 0;
  } catch (e) {
    if (cancel.signal.aborted) {
      console.error('horizon quality: cancelled');
      return 130;
    }
    console.error(`horizon quality: ${(e as Error).message}`);
    return 1;
  } finally {
    stopWatch();
    cancel.dispose();
  }
}
