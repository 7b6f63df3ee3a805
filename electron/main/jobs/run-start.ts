import type { AppErrorCode } from '../../common/result.js';
import { deviceProblem, type DeviceProblem } from '../../common/worker-protocol.js';
import type { RunRecord } from '../db/run-repo.js';
import { autoBatchForRun, probeDevices } from './auto-batch.js';
import { createEvalRun, type EvalRunDeps, type NewEvalRun } from './eval-run.js';

/** A run that cannot start, with the code the app answers (the CLI prints the message). */
export class RunStartError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A new run as the app's Run page and `horizon eval` ask for it; the batch is chosen for the device when omitted. */
export type RunStart = Omit<NewEvalRun, 'batch'> & { readonly batch?: number };

/**
 * Stores a new run, queued, the one way the app and `horizon eval` both start one: a GPU asked for that the worker
 * does not have fails before anything is stored (the run would only fail, resumable in vain), worded by `describe`
 * for the caller's own options; a batch not asked for is sized for the device the run will load on.
 */
export async function startEvalRun(deps: EvalRunDeps, req: RunStart, describe: (p: DeviceProblem) => string): Promise<RunRecord> {
  const choice = req.backend ?? 'auto';
  if (choice !== 'cpu') {
    // A worker that cannot probe is left to fail the load, naming why.
    const probe = await probeDevices(deps.runtime);
    const problem = probe && deviceProblem(probe, choice, req.cudaDevice);
    if (problem) throw new RunStartError('BAD_INPUT', describe(problem));
  }
  const batch = req.batch ?? (await autoBatchForRun(deps.runtime, deps.records, req));
  return createEvalRun(deps, { ...req, batch });
}
