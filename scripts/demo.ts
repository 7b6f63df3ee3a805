/**
 * `npm run demo`: the whole pipeline on the CPU in about a minute. Generates the seeded tiny OLMoE checkpoint, serves
 * it from the loopback Hub fixture and prepares it like a real model (resolve, verified download, INT4 pack,
 * prepared.json), runs IFEval through the runtime worker (chat template, greedy, batched, scored as it goes) into
 * SQLite, writes the result ZIP, verifies it, checks INT4 against BF16 on the same tokens, and prints the four
 * accuracies, the check's figures and where everything is.
 * Options: see DEMO_USAGE (scripts/lib/demo-args.ts); a bad flag or value exits 2 with the usage, as horizon's do.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { dataLayout, lockDataDir } from '../electron/main/data-dir.js';
import { openDatabase } from '../electron/main/db/open-database.js';
import { ResponseRepo } from '../electron/main/db/response-repo.js';
import { RunRepo } from '../electron/main/db/run-repo.js';
import { verifyResultZip } from '../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../electron/main/export/write-result-zip.js';
import { loadEvalInputs, sharedAssetsDir } from '../electron/main/jobs/eval-inputs.js';
import { createEvalRun, executeEvalRun } from '../electron/main/jobs/eval-run.js';
import { resolveModelSource } from '../electron/main/jobs/model-source.js';
import { formatAccuracies, formatIntervals, runAccuracies, runIntervals } from '../electron/main/jobs/run-accuracies.js';
import { downloadIfevalData, downloadPunkt, evalAssetsStatus } from '../electron/main/prep/eval-assets.js';
import { prepareModel } from '../electron/main/prep/prepare-model.js';
import { runQualityJob } from '../electron/main/prep/quality-job.js';
import { closerSentence, meanKlRatio, q4_0Inputs, ratioRange } from '../electron/common/quality-summary.js';
import { qualityReportFile, readQualityReport } from '../electron/main/prep/quality-report.js';
import { toolVersion } from '../electron/node/app-root.js';
import { WorkerClient, forkSpawner } from '../electron/main/worker-client.js';
import { startHubServer } from '../test/fixtures/hub-server.js';
import { DEMO_USAGE, DemoUsageError, parseDemoArgs } from './lib/demo-args.js';
import { makeTinyModel } from './make-tiny-model.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEMO_REPO = 'horizon-demo/tiny-olmoe';
/** The quality check's prompts: `horizon quality`'s default, a few seconds on the tiny model. */
const QUALITY_PROMPTS = 32;
const seconds = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

async function main(): Promise<number> {
  const args = parseDemoArgs(process.argv.slice(2));
  if (args === 'help') {
    console.log(DEMO_USAGE);
    return 0;
  }
  const dataDir = path.resolve(args.dataDir ?? path.join(REPO_ROOT, '.horizon-data', 'demo'));
  // The app, horizon serve and horizon eval take the folder one at a time; the demo writes its database too.
  const unlock = lockDataDir(dataDir);
  try {
    return await demo(dataDir, args);
  } finally {
    unlock();
  }
}

async function demo(dataDir: string, { limit, maxNewTokens, batch }: { limit: number; maxNewTokens: number; batch: number }): Promise<number> {
  const t0 = performance.now();
  console.log(`Horizon RunMap demo: tiny OLMoE on the CPU backend`);
  console.log(`  data folder ${dataDir}`);
  console.log(`  IFEval: first ${limit} prompts, batch ${batch}, greedy, max new tokens ${maxNewTokens}, stop on EOS`);

  if (!existsSync(path.join(sharedAssetsDir(), 'ifeval', 'input_data.jsonl'))) {
    // No local copies to import: fetch the pinned upstream files (sha256-checked; a no-op when already present).
    const status = await evalAssetsStatus(dataDir);
    if (!status.ifeval.ready) console.log(`  downloaded ${await downloadIfevalData({ dataDir })}`);
    if (!status.punkt.ready) console.log(`  downloaded ${await downloadPunkt({ dataDir })}`);
  }
  const inputs = await loadEvalInputs(dataDir);
  for (const f of inputs.imported) console.log(`  imported eval asset ${f} from ${sharedAssetsDir()}`);

  // 1. The checkpoint, served from the loopback Hub fixture so preparation runs exactly as for a real model.
  const checkpoint = path.join(dataDir, 'demo-checkpoint');
  await rm(checkpoint, { recursive: true, force: true });
  const tiny = await makeTinyModel(checkpoint, { seed: 7 });
  console.log(`1. generated the tiny checkpoint (${tiny.config.num_hidden_layers} layers, ${tiny.config.num_experts} experts, vocab ${tiny.config.vocab_size}) in ${seconds(t0)}`);
  const hub = await startHubServer({ repos: { [DEMO_REPO]: { dir: checkpoint } } });
  let prepared;
  try {
    const tp = performance.now();
    prepared = await prepareModel({ repo: DEMO_REPO, revision: 'main', dataDir, hubUrl: hub.url, hfCacheDir: null });
    console.log(`2. prepared ${DEMO_REPO}@${prepared.commit.slice(0, 7)} from the local Hub (${hub.url}): downloaded, verified, packed to INT4 in ${seconds(tp)}`);
  } finally {
    await hub.close();
  }

  // 2. The run, through the runtime worker process (the only process that loads the native addon).
  const dbFile = dataLayout.database(dataDir);
  const db = openDatabase(dbFile);
  const worker = new WorkerClient(forkSpawner());
  try {
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    const deps = { runs, responses, runtime: worker, records: inputs.records, tools: inputs.tools };
    const source = await resolveModelSource(prepared.modelDir, 'int4');
    const runId = `demo-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}`;
    const tr = performance.now();
    const created = await createEvalRun(deps, {
      runId, source, backend: 'cpu', limit, batch, maxNewTokens, appVersion: toolVersion(), datasetSha256: inputs.datasetSha256,
    });
    console.log(`3. run ${runId}: ${created.modelId}, stop ids ${created.policy.stopTokenIds.join(',')}`);
    let lastPrint = 0;
    const final = await executeEvalRun(deps, runId, {
      onLoaded: (i) => console.log(`   loaded in the runtime worker on ${i.deviceLabel} (${i.residency})`),
      onProgress: (p) => {
        if (p.partial || p.status !== 'running' || p.tokensPerSecond === null || (p.done < p.total && performance.now() - lastPrint < 3000)) return;
        lastPrint = performance.now();
        console.log(`   [${p.done}/${p.total}] ${p.tokensPerSecond.toFixed(0)} tok/s, ETA ${p.etaSeconds === null ? 'estimating' : `${Math.round(p.etaSeconds)} s`}`);
      },
    });
    const figures = responses.figures(runId);
    console.log(
      `   ${final.status} in ${seconds(tr)}: ${figures.generatedTokens} tokens generated, ` +
        `${(figures.generatedTokens / Math.max(figures.wallMs / 1000, 1e-9)).toFixed(0)} tok/s overall, mean TTFT ${figures.meanTtftMs?.toFixed(0) ?? '?'} ms`,
    );
    if (final.status !== 'completed') throw new Error(`the run ended ${final.status}: ${final.error ?? ''}`);

    // 3. What INT4 costs: the packed experts against the BF16 source on the same tokens, as the Models page runs it.
    const tq = performance.now();
    const qualityPrompts = Math.min(limit, QUALITY_PROMPTS);
    await runQualityJob({ modelDir: prepared.modelDir, dataDir, limit: qualityPrompts });
    if (prepared.packedDir === null) throw new Error(`${prepared.modelDir} was prepared without its INT4 pack`);
    const quality = await readQualityReport(qualityReportFile(prepared.modelDir, prepared.packedDir));
    if (!quality) throw new Error(`the quality check wrote no report beside ${prepared.modelDir}`);
    console.log(
      `4. INT4 against BF16 on the same tokens (first ${quality.prompts} prompts, ${quality.positions} positions) in ${seconds(tq)}: ` +
        `top-1 agreement ${(100 * quality.top1Agreement).toFixed(2)}%, mean KL ${quality.meanKl.toExponential(2)} nats`,
    );
    if (!quality.q4_0) throw new Error('the quality check left out its Q4_0 point of comparison');
    const q = quality.q4_0;
    const ratio = meanKlRatio(quality);
    console.log(
      `   llama.cpp's Q4_0 (${q4_0Inputs(q)}) on the same experts and tokens: top-1 agreement ${(100 * q.top1Agreement).toFixed(2)}%, ` +
        `mean KL ${q.meanKl.toExponential(2)} nats` +
        (ratio === null ? '' : ` (INT4's is ${ratio.toFixed(2)}x${q.meanKlRatioCi95 ? `, 95% CI ${ratioRange(q.meanKlRatioCi95)}` : ''})`),
    );
    const closer = closerSentence(q);
    if (closer) console.log(`   ${closer}`);

    // 4. The result ZIP, verified by re-scoring; it carries the check of its model (quality.json).
    const zip = await writeResultZip({ runs, responses, inputDataText: inputs.inputDataText, tools: inputs.tools }, runId, path.join(dataLayout.exportsDir(dataDir), `${runId}.zip`));
    const check = await verifyResultZip(zip.path, inputs.tools);
    console.log(`5. result ZIP ${check.verified ? 'verified' : `NOT verified (${check.problems.join('; ')})`}${check.quality ? ', carrying the INT4 check' : ''}`);
    const acc = runAccuracies(responses, runId);
    if (acc) console.log(formatAccuracies(acc).replace(/^/gm, '   '));
    const intervals = runIntervals(responses, runId);
    if (intervals) console.log(formatIntervals(intervals).replace(/^/gm, '   '));

    const qualityFile = qualityReportFile(prepared.modelDir, prepared.packedDir);
    console.log(`\nfiles:\n  database    ${dbFile}\n  result ZIP  ${zip.path}\n  model       ${prepared.modelDir}\n  INT4 check  ${qualityFile}`);
    console.log(`check it yourself: npx horizon verify ${zip.path}`);
    console.log(`read its failures: npx horizon show ${runId} --failed strict --data-dir ${dataDir}`);
    console.log(`total ${seconds(t0)}`);
    return check.verified ? 0 : 1;
  } finally {
    worker.dispose();
    db.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof DemoUsageError) {
      console.error(`demo: ${message}\n${DEMO_USAGE}`);
      process.exitCode = 2;
      return;
    }
    console.error(`demo: ${message}`);
    if (/not built|is not a function/.test(message)) console.error(`demo: the native runtime looks missing or stale; run 'npm run build:native'`);
    process.exitCode = 1;
  },
);
