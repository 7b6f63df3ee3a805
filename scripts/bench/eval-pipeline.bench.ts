/**
 * The IFEval run pipeline on the tiny model, CPU backend: worker start + model load, continuously batched generation
 * through the worker (1, 8 or 32 prompts at once) with scoring and an SQLite write per response as it finishes, then
 * result ZIP write and verify. Prints figures; asserts nothing.
 * Prompts: HORIZON_BENCH_PROMPTS (default 120); max new tokens: HORIZON_BENCH_TOKENS (default 64).
 * Run alone with `npx tsx scripts/bench/eval-pipeline.bench.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { openDatabase } from '../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../electron/main/db/response-repo.js';
import { RunRepo } from '../../electron/main/db/run-repo.js';
import { verifyResultZip } from '../../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../../electron/main/export/write-result-zip.js';
import { loadEvalInputs } from '../../electron/main/jobs/eval-inputs.js';
import { createEvalRun, executeEvalRun } from '../../electron/main/jobs/eval-run.js';
import { resolveModelSource } from '../../electron/main/jobs/model-source.js';
import { WorkerClient, forkSpawner } from '../../electron/main/worker-client.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../make-tiny-model.js';

export async function bench(): Promise<void> {
  const prompts = Number(process.env.HORIZON_BENCH_PROMPTS ?? 120);
  const maxNewTokens = Number(process.env.HORIZON_BENCH_TOKENS ?? 64);
  const root = mkdtempSync(path.join(tmpdir(), 'horizon-bench-eval-'));
  const worker = new WorkerClient(forkSpawner());
  const db = openDatabase(path.join(root, 'runmap.sqlite'));
  try {
    const inputs = await loadEvalInputs(path.join(root, 'data'));
    const model = path.join(root, 'tiny');
    await makeTinyModel(model, { seed: 11 });
    await packModel({ src: model, dst: path.join(model, 'int4-g32') });
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    const deps = { runs, responses, runtime: worker, records: inputs.records, tools: inputs.tools };
    const rows: [string, string][] = [];
    for (const batch of [1, 8, 32]) {
      const runId = `bench-b${batch}`;
      await createEvalRun(deps, {
        runId, source: await resolveModelSource(model, 'int4'), backend: 'cpu', limit: prompts, batch, maxNewTokens,
        appVersion: 'bench', datasetSha256: inputs.datasetSha256,
      });
      let loadedAt = 0;
      const t0 = performance.now();
      await executeEvalRun(deps, runId, { onLoaded: () => (loadedAt = performance.now()) });
      const wall = (performance.now() - loadedAt) / 1000;
      const f = responses.figures(runId);
      rows.push([
        `batch ${batch}`,
        `${(prompts / wall).toFixed(1)} prompts/s, ${(f.generatedTokens / wall).toFixed(0)} tok/s end to end, ` +
          `${(f.generatedTokens / (f.wallMs / 1000)).toFixed(0)} tok/s in generate, load ${((loadedAt - t0) / 1000).toFixed(2)} s`,
      ]);
    }
    const t1 = performance.now();
    const zip = await writeResultZip({ runs, responses, inputDataText: inputs.inputDataText, tools: inputs.tools }, 'bench-b8', path.join(root, 'r.zip'));
    const t2 = performance.now();
    const v = await verifyResultZip(zip.path, inputs.tools);
    const t3 = performance.now();
    rows.push(['result ZIP', `write ${(t2 - t1).toFixed(0)} ms (${zip.bytes} bytes), verify ${(t3 - t2).toFixed(0)} ms (${v.verified ? 'verified' : 'NOT verified'})`]);
    console.log(`eval pipeline (tiny model, CPU, ${prompts} prompts, max ${maxNewTokens} new tokens; load average ${loadavg()[0]!.toFixed(1)})`);
    for (const [what, value] of rows) console.log(`  ${what.padEnd(12)} ${value}`);
  } finally {
    worker.dispose();
    db.close();
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bench();
