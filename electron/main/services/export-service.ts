import { open, stat } from 'node:fs/promises';
import path from 'node:path';

import { OFFICIAL_INPUT_SHA256 } from '../../../evals/ifeval/dataset.js';

import type Database from 'better-sqlite3';

import type {
  EmitEvent,
  ExportApi,
  ExportedZip,
  ExportFile,
  ExportRequest,
  ImportedRunReport,
  RunRef,
  VerifyReport,
  VerifyRequest,
} from '../../common/ipc-contract.js';
import { isLiveStatus } from '../../common/ipc-contract.js';
import type { Result } from '../../common/result.js';
import { dataLayout } from '../data-dir.js';
import type { ResponseRepo } from '../db/response-repo.js';
import type { RunRepo } from '../db/run-repo.js';
import { importResultZip } from '../export/import-result-zip.js';
import { exportFiles } from '../export/export-files.js';
import { isPerfZip, verifyPerfZip } from '../export/perf-zip.js';
import { zipCutCount, zipSubject } from '../export/zip-subject.js';
import { readZipEntries, verifyResultZip } from '../export/verify-result-zip.js';
import { writeResultZip } from '../export/write-result-zip.js';
import type { EvalInputs } from '../jobs/eval-inputs.js';
import { runSummary } from './runs-service.js';
import { refusingImport, ServiceError, toResult } from './service-result.js';

export interface ExportServiceOptions {
  readonly runs: RunRepo;
  readonly responses: ResponseRepo;
  /** The connection the repos use: an import stores its run in one transaction on it. */
  readonly db: Database.Database;
  readonly dataDir: string;
  readonly inputs: () => Promise<EvalInputs>;
  readonly emit: EmitEvent;
}

/** An export replaces only a ZIP: a path the renderer sends must not overwrite any other file of the user's. */
async function checkExportTarget(file: string): Promise<void> {
  if (path.extname(file).toLowerCase() !== '.zip') throw new ServiceError('BAD_INPUT', `export path must end in .zip: ${file}`);
  let head: Buffer | null = null;
  try {
    // Before opening: a FIFO would block the open for good.
    if (!(await stat(file)).isFile()) throw new ServiceError('BAD_INPUT', `${file} exists and is not a file; choose another name`);
    const fh = await open(file, 'r');
    try {
      head = Buffer.alloc(4);
      await fh.read(head, 0, 4, 0);
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (e instanceof ServiceError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw new ServiceError('BAD_INPUT', `${file}: cannot be replaced (${code ?? (e as Error).message})`);
  }
  // A ZIP starts with a local file header, or with the end record when empty.
  if (head !== null && !['504b0304', '504b0506'].includes(head.toString('hex'))) {
    throw new ServiceError('BAD_INPUT', `${file} exists and is not a ZIP; choose another name`);
  }
}

/** Result ZIPs: writing one for a stored run and verifying any. */
export class ExportService implements ExportApi {
  constructor(private readonly opts: ExportServiceOptions) {}

  exportRun(req: ExportRequest): Promise<Result<ExportedZip>> {
    return toResult(async () => {
      const run = this.opts.runs.get(req.runId);
      if (!run) throw new ServiceError('NOT_FOUND', `run ${req.runId} not found`);
      // A ZIP of a run still generating would be out of date as soon as it is written; a cancelled or failed run
      // exports what it has (the ZIP records its status and the verifier re-scores what is there).
      if (isLiveStatus(run.status)) {
        throw new ServiceError('BAD_INPUT', `run ${req.runId} is still ${run.status}: export it once it has finished or been cancelled`);
      }
      if (req.path !== undefined && !path.isAbsolute(req.path)) throw new ServiceError('BAD_INPUT', `export path must be absolute: ${req.path}`);
      if (req.path !== undefined) await checkExportTarget(req.path);
      const inputs = await this.opts.inputs();
      const out = req.path ?? path.join(dataLayout.exportsDir(this.opts.dataDir), `${req.runId}.zip`);
      return writeResultZip({ runs: this.opts.runs, responses: this.opts.responses, inputDataText: inputs.inputDataText, tools: inputs.tools }, req.runId, out);
    });
  }

  listZips(req: RunRef): Promise<Result<readonly ExportFile[]>> {
    return toResult(() => exportFiles(dataLayout.exportsDir(this.opts.dataDir), req.runId));
  }

  /** The data folder's prompts are pinned to the official set, so a partial official run's rows are compared too. */
  private static officialInput(inputs: EvalInputs): { officialInputText?: string } {
    return inputs.datasetSha256 === OFFICIAL_INPUT_SHA256 ? { officialInputText: inputs.inputDataText } : {};
  }

  verify(req: VerifyRequest): Promise<Result<VerifyReport>> {
    return toResult(async () => {
      if (!path.isAbsolute(req.path)) throw new ServiceError('BAD_INPUT', `ZIP path must be absolute: ${req.path}`);
      const entries = await readZipEntries(req.path);
      const described = zipSubject(entries);
      const subject = described ? { subject: described.subject } : {};
      if (isPerfZip(entries)) {
        const perf = await verifyPerfZip(req.path, entries);
        return { kind: 'campaign' as const, verified: perf.verified, problems: perf.problems, unchecked: [], accuracies: null, ...subject };
      }
      const inputs = await this.opts.inputs();
      const r = await verifyResultZip(req.path, inputs.tools, { ...ExportService.officialInput(inputs), entries });
      const cut = zipCutCount(entries);
      return {
        kind: 'result' as const, verified: r.verified, problems: r.problems, unchecked: r.unchecked, accuracies: r.accuracies,
        ...(r.run ? { run: r.run } : {}),
        ...subject,
        ...(cut ? { cut } : {}),
        ...(r.quality ? { quality: r.quality } : {}),
      };
    }, 'BAD_INPUT');
  }

  importRun(req: VerifyRequest): Promise<Result<ImportedRunReport>> {
    return toResult(async () => {
      if (!path.isAbsolute(req.path)) throw new ServiceError('BAD_INPUT', `ZIP path must be absolute: ${req.path}`);
      const inputs = await this.opts.inputs();
      const imported = await refusingImport(
        importResultZip(req.path, {
          runs: this.opts.runs,
          responses: this.opts.responses,
          db: this.opts.db,
          tools: inputs.tools,
          verifyOptions: ExportService.officialInput(inputs),
        }),
        'import it on the Performance page',
      );
      this.opts.emit('runs:onDidImport', { runId: imported.run.id });
      return { run: runSummary(imported.run, this.opts.responses), unchecked: imported.unchecked };
    }, 'BAD_INPUT');
  }
}
