/**
 * The contract between the UI (renderer, over Electron IPC or the `horizon serve` HTTP/WS transport) and the
 * main-process services. One interface per service; every method takes at most one plain-data request object and
 * resolves to a `Result<T>`; channels are `service:method`; events are `service:onDidX`.
 * To add a method: add it to its interface, then give its request a schema in `ipc-validators.ts` (the type checker
 * fails until you do), then implement it in `electron/main/services/<service>.ts`.
 */
import type { AccuracyIntervals } from './accuracy-intervals.js';
import type { PairedInstructionType, PairedLevel, StrictLoose } from './paired-stats.js';
import type { PerfCampaign, PerfCampaignDetail, PerfStatus } from './perf-campaign.js';
import type { Result } from './result.js';
import type { BackendKind } from './worker-protocol.js';

//#region system

/** The pinned default model: repo and commit. */
export const DEFAULT_MODEL_REPO = 'allenai/OLMoE-1B-7B-0924-Instruct';
export const DEFAULT_MODEL_REVISION = '7f1c97f440f06ce36705e4f2b843edb5925f4498';
/**
 * The default model on disk: its checkpoint as downloaded (6,919,161,856 BF16 parameters, 2 bytes each, plus its
 * JSON and tokenizer files) and its INT4 pack (6,442,450,944 expert weights at 4.5 bits, 476,710,912 others in FP16).
 */
export const DEFAULT_MODEL_DOWNLOAD_BYTES = 13_840_500_000;
export const DEFAULT_MODEL_PACKED_BYTES = 4_580_000_000;

export interface GpuInfo {
  /** CUDA device index. */
  readonly index: number;
  readonly name: string;
  /** Total device memory in bytes. */
  readonly totalMemoryBytes: number;
  /** What a run could use now: free memory, counting the runtime's own loaded model as free. */
  readonly freeMemoryBytes: number;
  /** Driver version as reported by CUDA, e.g. "12.4" (or the raw integer as a string). */
  readonly driverVersion: string;
  /** Compute capability, e.g. "8.9". */
  readonly computeCapability: string;
}

export type AssetKind = 'ifeval' | 'punkt';

export interface AssetStatus {
  readonly kind: AssetKind;
  /** True when the asset is present under the data dir and its pinned sha256 verifies. */
  readonly ready: boolean;
  /** Where it lives under the data dir (even when missing). */
  readonly path: string;
  /** One line for the UI: "541 prompts, sha256 ok" or why it is not ready. */
  readonly detail: string;
}

export interface SystemInfo {
  /** The backend runs will use: a CUDA device when one is usable, else the CPU backend. */
  readonly backend: 'cuda' | 'cpu';
  /** Human label always naming the backend, e.g. "CUDA: NVIDIA RTX 4090, 24.0 GiB" or "CPU backend (no CUDA device)". */
  readonly backendLabel: string;
  /** Empty when there is no usable GPU. */
  readonly gpus: readonly GpuInfo[];
  /** Why CUDA is not used, when it is not (driver error text or "not compiled with CUDA"); empty otherwise. */
  readonly cudaStatus: string;
  /** CPU model name and logical core count, e.g. "AMD EPYC 7B13 (2 threads)". */
  readonly cpuLabel: string;
  /** Total system memory in bytes. */
  readonly memoryBytes: number;
  readonly dataDir: string;
  /** Hugging Face Hub base URL preparation uses. */
  readonly hubUrl: string;
  readonly appVersion: string;
  /** Free bytes for this user on the data folder's disk; null when the system does not say. */
  readonly dataDirFreeBytes: number | null;
  readonly assets: readonly AssetStatus[];
  /** True in the desktop app, where `pickPath` opens the system's file dialog; false in a browser (paths are typed). */
  readonly nativeDialogs: boolean;
}

export interface FileFilter {
  readonly name: string;
  /** Extensions without the dot, e.g. ['jsonl']. */
  readonly extensions: readonly string[];
}

export interface PickPathRequest {
  readonly kind: 'file' | 'folder';
  /** The dialog's title, e.g. "IFEval input_data.jsonl". */
  readonly title: string;
  readonly filters?: readonly FileFilter[];
}

export interface PickPathResult {
  /** The chosen absolute path, or null when the dialog was cancelled. */
  readonly path: string | null;
}

export interface SystemApi {
  /** Probes the devices (through the runtime worker) and the data dir. */
  check(): Promise<Result<SystemInfo>>;
  /** Opens the system's open-file or open-folder dialog (desktop app only; see SystemInfo.nativeDialogs). */
  pickPath(req: PickPathRequest): Promise<Result<PickPathResult>>;
}

//#endregion
//#region models

export type WeightsFormat = 'int4' | 'bf16';
/** The backend a run or campaign ran on; 'pending' until its model is first loaded. */
export type RunBackend = BackendKind | 'pending';

export interface PreparedModel {
  /** Stable id used by runs, e.g. "allenai--OLMoE-1B-7B-0924-Instruct@7f1c97f/int4-g32". */
  readonly id: string;
  readonly repo: string;
  /** The resolved commit sha (40 hex). */
  readonly revision: string;
  readonly weights: WeightsFormat;
  /** Folder holding the runnable model. */
  readonly dir: string;
  /** Bytes on disk of the runnable model. */
  readonly sizeBytes: number;
  /** ISO-8601 time the manifest was written. */
  readonly preparedAt: string;
  /** True when the manifest verifies (files present with recorded sizes). */
  readonly ready: boolean;
  /** For an INT4 model whose BF16 source is there too: the stored INT4-vs-BF16 check (`horizon quality`), if run. */
  readonly quality?: StoredQualityReport | null;
}

/** One prompt of the INT4-vs-BF16 quality check. */
export interface QualityPromptResult {
  readonly key: number;
  readonly promptTokens: number;
  readonly responseTokens: number;
  readonly top1Agreement: number;
  readonly meanKl: number;
  /** Response position (0-based) where BF16's greedy choice first differs from the INT4 response; null if never. */
  readonly firstDivergence: number | null;
  /** KL(BF16 || Q4_0) at the same positions, where the check ran the Q4_0 comparison. */
  readonly q4_0MeanKl?: number;
}

/** How close one weight set's next-token distributions come to BF16's over the compared positions. */
export interface QualityAgreement {
  readonly top1Agreement: number;
  /** KL(BF16 || these weights) in nats, mean and 99th percentile over positions. */
  readonly meanKl: number;
  readonly p99Kl: number;
  readonly meanAbsLogitDiff: number;
}

/**
 * The activations Q4_0's experts multiplied: 8-bit, rounded as llama.cpp's Q8_0 rounds them (as llama.cpp runs Q4_0,
 * on the CPU and in CUDA), or float, in a report from before the check rounded them (which favoured Q4_0).
 */
export type Q4_0Activations = 'q8_0' | 'float';

/** Q4_0's agreement with BF16, and how INT4's mean KL compares with its. */
export interface Q4_0Agreement extends QualityAgreement {
  readonly activations: Q4_0Activations;
  /**
   * 95% interval of INT4's mean KL over Q4_0's (paired bootstrap over the prompts, seeded); null under two prompts or
   * where a resample has no Q4_0 divergence.
   */
  readonly meanKlRatioCi95: readonly [number, number] | null;
  /**
   * Prompts where INT4's mean KL is below Q4_0's, and above it (ties, and prompts without positions, in neither), with
   * the exact two-sided sign test on them; null in a report from before they were added.
   */
  readonly promptsInt4Closer: number | null;
  readonly promptsQ4_0Closer: number | null;
  readonly signTestP: number | null;
}

/** The INT4-vs-BF16 quality check over the INT4 weights' greedy responses, teacher-forced through both. */
export interface QualityReport extends QualityAgreement {
  readonly prompts: number;
  /** Response positions compared over all prompts. */
  readonly positions: number;
  /** Prompts whose whole INT4 response BF16's greedy decoding would have chosen too. */
  readonly promptsWithoutDivergence: number;
  /** Median first divergence over the prompts that diverge; null when none does. */
  readonly medianFirstDivergence: number | null;
  /**
   * The point of comparison: the BF16 experts rounded as llama.cpp's Q4_0 rounds them, their inputs as its Q8_0 does,
   * over the same positions; null when the check left it out (or a report from before it was added).
   */
  readonly q4_0: Q4_0Agreement | null;
  readonly perPrompt: readonly QualityPromptResult[];
}

/** A quality report as stored beside a prepared model (quality-<int4 folder>.json). */
export interface StoredQualityReport extends QualityReport {
  readonly format: 'horizon-quality-v1';
  readonly createdAt: string;
  /** The INT4 folder checked, e.g. "int4-g32". */
  readonly int4Dir: string;
  /**
   * sha256 of that folder's horizon-manifest.json when it was checked: a report whose pack has changed since is not
   * shown (absent in reports from before it was recorded).
   */
  readonly packManifestSha256?: string;
  /** Where the INT4 weights ran. */
  readonly backend: 'cpu' | 'cuda';
  /** The first N IFEval prompts. */
  readonly limit: number;
  readonly maxNewTokens: number;
}

export interface PrepareRequest {
  /** "org/name"; defaults to DEFAULT_MODEL_REPO in the UI. */
  readonly repo: string;
  /** Branch, tag or commit; defaults to DEFAULT_MODEL_REVISION in the UI. */
  readonly revision: string;
  /** Hugging Face access token for gated or private repos; never stored. */
  readonly token?: string;
  /** Pack the routed experts to INT4 after download (default true). */
  readonly pack?: boolean;
}

export interface JobHandle {
  readonly jobId: string;
}

export type PrepareStep = 'resolve' | 'download' | 'verify' | 'pack' | 'assets' | 'quality';
export type JobStatus = 'running' | 'done' | 'failed' | 'cancelled';

export interface PrepareProgress {
  readonly jobId: string;
  readonly step: PrepareStep;
  readonly status: JobStatus;
  /** File being processed, when the step is per file (several, comma-separated, when shards download at once). */
  readonly file?: string;
  /** Bytes done/total for the current step (0/0 when unknown). */
  readonly doneBytes: number;
  readonly totalBytes: number;
  /** Bytes per second over the recent window. */
  readonly bytesPerSecond: number;
  /** Seconds left for the current step; null when unknown. */
  readonly etaSeconds: number | null;
  /** Human status line. */
  readonly message: string;
  /** Set on the final event of a successful job. */
  readonly modelId?: string;
  /** Set when status is "failed". */
  readonly error?: { readonly code: string; readonly message: string };
}

export interface ImportAssetRequest {
  readonly kind: AssetKind;
  /** Absolute path on the machine running the services: input_data.jsonl for ifeval; a folder or zip for punkt. */
  readonly path: string;
}

export interface QualityCheckRequest {
  /** An INT4 model of `models:list` whose BF16 source is prepared too. */
  readonly modelId: string;
  /** The first N IFEval prompts (1..541; default 32). */
  readonly limit?: number;
}

export interface DownloadAssetsRequest {
  /** Which assets; all missing ones when omitted. */
  readonly kinds?: readonly AssetKind[];
}

export interface ModelRef {
  readonly modelId: string;
}

/** One file of a model variant's folder. */
export interface ModelFile {
  /** Relative to the variant's folder, '/'-separated. */
  readonly path: string;
  readonly bytes: number;
}

/** Everything about one prepared variant: where it is, what it holds and how it was made. */
export interface ModelDetails {
  readonly id: string;
  readonly repo: string;
  /** The commit sha it resolved to, and the revision asked for (branch, tag or sha). */
  readonly revision: string;
  readonly revisionAsked: string;
  readonly weights: WeightsFormat;
  /** The prepared folder (prepared.json, source/, int4-gN/) and this variant's own folder inside it. */
  readonly preparedDir: string;
  readonly dir: string;
  readonly files: readonly ModelFile[];
  readonly totalBytes: number;
  /** INT4 only: the packed format (qpacked-v2), its 4-bit codebook, the group size and the bits a weight it costs. */
  readonly packScheme: { readonly format: string; readonly codebook: string; readonly groupSize: number; readonly bitsPerWeight: number } | null;
  readonly hubUrl: string;
  readonly preparedAt: string;
  readonly toolVersion: string;
  /** What does not match prepared.json (sizes; empty when it verifies). */
  readonly problems: readonly string[];
}

export interface DeleteModelRequest {
  readonly modelId: string;
  /**
   * 'variant': only this INT4 pack (the BF16 checkpoint and other packs stay); 'model': the whole prepared revision,
   * checkpoint and packs. A BF16 id takes 'model' only: every variant is read from its checkpoint.
   */
  readonly scope: 'variant' | 'model';
}

export interface DeletedModel {
  readonly modelId: string;
  readonly deletedDir: string;
  readonly freedBytes: number;
}

export interface ModelsApi {
  /** Prepared (and partially prepared) models under the data dir. */
  list(): Promise<Result<readonly PreparedModel[]>>;
  /** One variant's files, sizes, manifest facts and pack scheme. */
  details(req: ModelRef): Promise<Result<ModelDetails>>;
  /**
   * Deletes an INT4 variant or a whole prepared model. Refused while a preparation or quality check runs, or a live
   * run uses the model; stored runs keep their results (they can no longer be resumed).
   */
  delete(req: DeleteModelRequest): Promise<Result<DeletedModel>>;
  /** Starts download → verify → pack; progress arrives as `models:onDidProgress` with the returned job id. */
  prepare(req: PrepareRequest): Promise<Result<JobHandle>>;
  /** Cancels a preparation job; it can be restarted later and resumes. */
  cancel(req: JobHandle): Promise<Result<void>>;
  /** Downloads the pinned eval assets; progress as `models:onDidProgress` with step "assets". */
  downloadAssets(req: DownloadAssetsRequest): Promise<Result<JobHandle>>;
  /** Imports one eval asset from a local file, checking its pinned sha256. */
  importAssets(req: ImportAssetRequest): Promise<Result<AssetStatus>>;
  /**
   * Runs the INT4-vs-BF16 quality check (`horizon quality`) of an INT4 model; progress as `models:onDidProgress` with
   * step "quality" (doneBytes/totalBytes count prompts), the report stored with the model; `cancel` stops it.
   */
  checkQuality(req: QualityCheckRequest): Promise<Result<JobHandle>>;
}

//#endregion
//#region runs

export type RunStatus = 'queued' | 'running' | 'cancelled' | 'failed' | 'completed';

/** The statuses of a run whose job still writes to it. */
export type LiveRunStatus = Extract<RunStatus, 'queued' | 'running'>;

/** True for a run that is queued or running: it still changes, so it is neither exported nor deleted. */
export function isLiveStatus(status: RunStatus): status is LiveRunStatus {
  return status === 'queued' || status === 'running';
}

export interface StartRunRequest {
  readonly modelId: string;
  /** First N prompts of IFEval (1..541); all when omitted. */
  readonly limit?: number;
  /** Prompts generated together (1..256). */
  readonly batch?: number;
  /** Generation cap per response (1..4096; engine default 1280). */
  readonly maxNewTokens?: number;
  /**
   * CUDA: device memory in MiB (256..1048576) for resident experts; fewer than all experts per layer means partial
   * residency. Omitted: as much as fits after the KV cache. Ignored by the CPU backend.
   */
  readonly expertBudgetMiB?: number;
  /** CUDA device index (0..63, as `SystemInfo.gpus` lists them); the first device when omitted. Ignored on the CPU. */
  readonly cudaDevice?: number;
  /** The run's label (as `runs:setLabel` takes it); none when omitted or empty. */
  readonly label?: string;
}

export interface RunRef {
  readonly runId: string;
}

/** Accuracies in [0, 1]. */
export interface Accuracies {
  readonly promptStrict: number;
  readonly promptLoose: number;
  readonly instructionStrict: number;
  readonly instructionLoose: number;
}

export interface GenerationPolicy {
  readonly maxNewTokens: number;
  readonly batch: number;
  readonly greedy: boolean;
  /** Prompts in this run (limit applied). */
  readonly total: number;
  /** CUDA device memory asked for resident experts; null = as much as fits. */
  readonly expertBudgetBytes: number | null;
  /** CUDA device index asked for; null = the first device. */
  readonly cudaDevice: number | null;
}

export interface RunSummary {
  readonly id: string;
  readonly modelId: string;
  readonly modelRepo: string;
  readonly modelRevision: string;
  readonly weights: WeightsFormat;
  readonly status: RunStatus;
  readonly backend: RunBackend;
  /** E.g. "CPU backend" or "CUDA: NVIDIA H200". */
  readonly backendLabel: string;
  /** ISO-8601. */
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly done: number;
  readonly total: number;
  /** Prompts generated at once (asked for, or chosen for the device when the run asked for none). */
  readonly batch: number;
  /** Over the responses scored so far; null before the first. */
  readonly accuracies: Accuracies | null;
  readonly error: string | null;
  /** Where a run read from a result ZIP came from (`export:importRun`); null for a run made here. */
  readonly imported: ZipOrigin | null;
  /** The run's label (`runs:setLabel`, label.ts); null for none. */
  readonly label: string | null;
}

/** The ZIP an imported run or campaign was read from. */
export interface ZipOrigin {
  /** The ZIP's path when it was imported. */
  readonly file: string;
  /** sha256 of the whole ZIP file. */
  readonly sha256: string;
  /** ISO-8601. */
  readonly importedAt: string;
}

export interface InstructionTypeRow {
  /** IFEval instruction id, e.g. "keywords:existence". */
  readonly instructionId: string;
  /** Instructions of this type in the scored responses. */
  readonly count: number;
  readonly strictPassed: number;
  readonly loosePassed: number;
}

export interface RunFigures {
  /** Mean time to first token per response, milliseconds; null when unknown. */
  readonly ttftMs: number | null;
  /** Decode tokens per second excluding the first token; null when unknown. */
  readonly decodeTokensPerSecond: number | null;
  /** Peak GPU memory in bytes; null on the CPU backend. */
  readonly peakMemoryBytes: number | null;
  /**
   * What peakMemoryBytes measures: 'process' is this app's own GPU memory (NVML); 'device' is the GPU's used memory
   * with other programs included (the driver does not report memory per process, as on Windows); null when unknown
   * (the CPU backend, or a run recorded before the scope was).
   */
  readonly peakMemoryScope: 'process' | 'device' | null;
  /** Host-to-device bytes moved for experts; null on the CPU backend. */
  readonly h2dBytes: number | null;
  /**
   * CUDA: expert uses found on the GPU, copied in first, and copies discarded for room, summed over the run; null on
   * the CPU backend and for runs recorded before these were.
   */
  readonly expertCache: { readonly hits: number; readonly misses: number; readonly evictions: number } | null;
  readonly generatedTokens: number;
  /** Wall time spent generating, seconds. */
  readonly wallSeconds: number;
}

export interface RunDetail extends RunSummary {
  /** Where the runtime kept the weights, as it reported them (e.g. how many experts per layer were on the GPU). */
  readonly residency: string;
  readonly policy: GenerationPolicy;
  readonly byInstruction: readonly InstructionTypeRow[];
  readonly figures: RunFigures;
  /** The stored responses by how they ended: a response cut at max new tokens may fail for that alone. */
  readonly endings: Readonly<Record<ResponseEnding, number>>;
  /** 95% intervals of the four accuracies over the stored prompts (accuracy-intervals.ts); null below two prompts. */
  readonly intervals: AccuracyIntervals | null;
  /** The INT4 check of the run's model that an imported run's result ZIP carried (quality.json); null otherwise. */
  readonly carriedQuality: QualityReport | null;
}

/** How a response ended: the model's end token ('stop'), max new tokens ('length'), or a cancel ('cancelled'). */
export type ResponseEnding = 'stop' | 'length' | 'cancelled';
export const RESPONSE_ENDINGS: readonly ResponseEnding[] = ['stop', 'length', 'cancelled'];
/** Each ending in the words of the response detail, the Ending filter and `horizon show`. */
export const ENDING_TEXT: Readonly<Record<ResponseEnding, string>> = { stop: 'ended by the model', length: 'cut at max new tokens', cancelled: 'cancelled' };

export type VerdictFilter = 'pass' | 'fail';
export type ScoreMode = 'strict' | 'loose';

/** What the response list is ordered by; ties go by key. */
export type ResponseSortKey = 'key' | 'instructions' | 'strict' | 'loose';
export const RESPONSE_SORT_KEYS: readonly ResponseSortKey[] = ['key', 'instructions', 'strict', 'loose'];

export interface ResponseQuery {
  readonly runId: string;
  /**
   * Only responses whose prompt has this instruction id; the verdict filter, the strict/loose order and each row's
   * `instructionVerdict` then are that instruction's verdict, not the prompt's.
   */
  readonly instructionId?: string;
  /** With `mode`: only prompts that pass (all instructions) or fail (any). */
  readonly verdict?: VerdictFilter;
  /** Which scoring the verdict filter uses (default strict). */
  readonly mode?: ScoreMode;
  /** Case-insensitive substring of the prompt or the response. */
  readonly text?: string;
  /** Only responses that ended this way (cut at max new tokens: 'length'). */
  readonly finish?: ResponseEnding;
  /** Default: by key, as a number (#102 before #1019). Failing sorts before passing. */
  readonly sortBy?: ResponseSortKey;
  readonly descending?: boolean;
  readonly offset?: number;
  /** Page size (1..200, default 50). */
  readonly limit?: number;
}

export interface ResponseRow {
  /** IFEval prompt key. */
  readonly key: number;
  /** First ~200 characters of the prompt. */
  readonly promptPreview: string;
  /** First ~200 characters of the response. */
  readonly responsePreview: string;
  readonly instructionIds: readonly string[];
  readonly strictPass: boolean;
  readonly loosePass: boolean;
  readonly tokens: number;
  readonly finishReason: ResponseEnding;
  /**
   * With an instruction filter: that instruction's verdict in this prompt (all its occurrences must pass), and what
   * the scorer found for it (its first occurrence that fails strict, else its first; null as in InstructionVerdict).
   */
  readonly instructionVerdict?: {
    readonly instructionId: string;
    readonly strictPass: boolean;
    readonly loosePass: boolean;
    readonly finding: string | null;
  };
}

export interface ResponsePage {
  /** Matching rows in total (for paging). */
  readonly total: number;
  readonly offset: number;
  readonly items: readonly ResponseRow[];
}

/** One response's timing. */
export interface RunPerformancePoint {
  readonly key: number;
  /** ISO-8601 time it was stored (finished). */
  readonly finishedAt: string;
  readonly tokens: number;
  /** Null when it produced no token. */
  readonly ttftMs: number | null;
  /** Null with fewer than two tokens. */
  readonly decodeTokensPerSecond: number | null;
}

export interface RunPerformance {
  readonly runId: string;
  readonly points: readonly RunPerformancePoint[];
}

export interface ResponseRef {
  readonly runId: string;
  readonly key: number;
}

export interface InstructionVerdict {
  readonly instructionId: string;
  /** The instruction's kwargs from the dataset. */
  readonly kwargs: Readonly<Record<string, unknown>>;
  readonly strict: boolean;
  readonly loose: boolean;
  /**
   * What the scorer found in the response, in words ("288 words; needs at least 300"). Null when it cannot say now:
   * the eval assets are missing, or this version's scorer gives another verdict than the one stored with the run.
   */
  readonly finding: string | null;
  /** Where loose passes and strict fails: the variant of the response that passed and what was found in it. */
  readonly looseFinding: { readonly variant: string; readonly detail: string } | null;
}

export interface ResponseDetail {
  readonly runId: string;
  readonly key: number;
  readonly prompt: string;
  readonly response: string;
  readonly tokens: number;
  readonly finishReason: ResponseEnding;
  readonly ttftMs: number | null;
  readonly decodeTokensPerSecond: number | null;
  readonly strictPass: boolean;
  readonly loosePass: boolean;
  readonly verdicts: readonly InstructionVerdict[];
}

export interface CompareRequest {
  readonly runA: string;
  readonly runB: string;
}

export interface ComparedPrompt {
  readonly key: number;
  readonly promptPreview: string;
  readonly a: StrictLoose;
  readonly b: StrictLoose;
}

/** Paired statistics over the prompts both runs scored (electron/common/paired-stats.ts computes each level). */
export interface PairedComparison {
  /** Prompts scored in both runs. */
  readonly common: number;
  readonly promptStrict: PairedLevel;
  readonly promptLoose: PairedLevel;
  readonly instructionStrict: PairedLevel;
  readonly instructionLoose: PairedLevel;
  /** Common prompts whose response text is the same in both runs. */
  readonly identicalResponses: number;
  /** Common prompts left out of the instruction levels because their instruction lists differ. */
  readonly instructionMismatches: number;
  /** The instruction levels' instructions by type, over the same prompts. */
  readonly byInstructionType: readonly PairedInstructionType[];
}

export interface RunComparison {
  readonly a: RunDetail;
  readonly b: RunDetail;
  /** Prompts scored in both runs whose strict or loose verdict differs: regressions (A passes, B fails) first. */
  readonly changed: readonly ComparedPrompt[];
  /** Prompts scored in both runs. */
  readonly common: number;
  readonly stats: PairedComparison;
}

export interface DeleteRunRequest {
  readonly runId: string;
  /** Also delete the run's result ZIPs in the data folder's exports/ (those `export:listZips` lists); default false. */
  readonly deleteExport?: boolean;
}

export interface SetRunLabelRequest {
  readonly runId: string;
  /** The new label, trimmed when stored; empty clears it. */
  readonly label: string;
}

export interface DeletedRun {
  readonly runId: string;
  /** Scored responses deleted with it. */
  readonly responses: number;
  /** Absolute paths of the result ZIPs deleted; empty unless `deleteExport` was asked for. */
  readonly deletedFiles: readonly string[];
  /** One line per result ZIP that could not be deleted (the run itself is deleted all the same). */
  readonly fileErrors: readonly string[];
}

export interface RunsApi {
  /** Creates and starts a run; progress as `runs:onDidProgress`, each scored response as `runs:onDidResponse`. */
  start(req: StartRunRequest): Promise<Result<RunSummary>>;
  /** Stops a run at once, keeping every response already finished; replies once it has stopped, then it can be resumed. */
  cancel(req: RunRef): Promise<Result<void>>;
  /** Continues a cancelled or failed run, skipping prompts already stored. */
  resume(req: RunRef): Promise<Result<RunSummary>>;
  /** All runs, newest first. */
  list(): Promise<Result<readonly RunSummary[]>>;
  get(req: RunRef): Promise<Result<RunDetail>>;
  responses(req: ResponseQuery): Promise<Result<ResponsePage>>;
  response(req: ResponseRef): Promise<Result<ResponseDetail>>;
  /** Every stored response's timing, in the order they finished: the Performance card's data. */
  performance(req: RunRef): Promise<Result<RunPerformance>>;
  compare(req: CompareRequest): Promise<Result<RunComparison>>;
  /**
   * Deletes a stored run with its responses, verdicts and figures in one transaction, and with `deleteExport` its
   * result ZIPs in exports/. A queued or running run is refused (cancel it first). Every UI is told as
   * `runs:onDidDelete`, as it is of a run another process (`horizon delete`) deleted, within seconds.
   */
  delete(req: DeleteRunRequest): Promise<Result<DeletedRun>>;
  /**
   * Labels a stored run, or clears its label; any run, running or imported. Every UI is told as `runs:onDidLabel`, as
   * it is of a label `horizon label` gave in another process.
   */
  setLabel(req: SetRunLabelRequest): Promise<Result<RunSummary>>;
}

//#endregion
//#region export

export interface ExportRequest {
  readonly runId: string;
  /** Absolute output path; default `<dataDir>/exports/<runId>.zip`. */
  readonly path?: string;
}

export interface ExportedZip {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** A file in the data folder's exports/. */
export interface ExportFile {
  /** Absolute path on the machine running the services. */
  readonly path: string;
  /** The file's name in exports/, e.g. "20261202T174512-9fe751.zip". */
  readonly name: string;
  readonly bytes: number;
}

export interface VerifyRequest {
  /** Absolute path of a result ZIP on the machine running the services. */
  readonly path: string;
}

export interface VerifyReport {
  /**
   * 'result' for a result ZIP (re-scored); 'campaign' for a campaign ZIP (`horizon perf`: its hashes, records and every
   * aggregate recomputed; no accuracies, no run).
   */
  readonly kind: 'result' | 'campaign';
  /** True when every hash matches and re-scoring (or recomputing) reproduces the stored results. */
  readonly verified: boolean;
  /** Empty when verified; else one precise line per problem. */
  readonly problems: readonly string[];
  /** Checks that could not be made, each saying why: neither problems nor passes. */
  readonly unchecked: readonly string[];
  readonly accuracies: Accuracies | null;
  /** The run as the ZIP's manifest describes it: a partial one (cancelled, failed) is not "completed". */
  readonly run?: { readonly status: string; readonly responses: number; readonly total: number };
  /** Which run or campaign the ZIP says it holds; absent when its manifest (campaign.json) cannot be read. */
  readonly subject?: ZipSubject;
  /**
   * A result ZIP's responses cut at max new tokens, as its responses.jsonl and manifest.json's policy say (vouched for
   * as the subject is: not by the re-score); absent for a campaign ZIP and where either cannot be read.
   */
  readonly cut?: CutCount;
  /** The INT4 check of the run's model that a result ZIP carries (quality.json): read, not re-checked. */
  readonly quality?: QualityReport;
}

/** How many of a run's responses were cut at max new tokens, of how many, at which cap. */
export interface CutCount {
  readonly cut: number;
  readonly of: number;
  readonly maxNewTokens: number;
}

/**
 * Which run or campaign a ZIP says it holds, as its manifest.json (a campaign ZIP's campaign.json) words it. The
 * verifier vouches for the responses and figures, not for these words. Each is null where the ZIP does not say it or
 * says no value the app would store.
 */
export interface ZipSubject {
  readonly id: string | null;
  readonly label: string | null;
  readonly modelRepo: string | null;
  readonly modelRevision: string | null;
  /** The model's id ("org--name@7f1c97f/int4-g32"), which names an INT4 pack's group size. */
  readonly modelId: string | null;
  readonly weights: 'int4' | 'bf16' | null;
  /** As `RunSummary.backendLabel` words it: "CPU backend", "CUDA: NVIDIA H200". */
  readonly backendLabel: string | null;
  readonly createdAt: string | null;
}

export interface ImportedRunReport {
  readonly run: RunSummary;
  /** Checks the verifier could not make, each saying why; the import went ahead without them. */
  readonly unchecked: readonly string[];
}

export interface ExportApi {
  exportRun(req: ExportRequest): Promise<Result<ExportedZip>>;
  verify(req: VerifyRequest): Promise<Result<VerifyReport>>;
  /**
   * Adds the run of a result ZIP (another machine's, a colleague's) to History: verified as `verify` does, then stored
   * with its id, times, status, model, device and figures as the ZIP recorded them. Refused when it does not verify,
   * is a campaign ZIP, or its run id is stored already. An imported run can be read, compared, exported and deleted,
   * not resumed. Every UI is told as `runs:onDidImport`.
   */
  importRun(req: VerifyRequest): Promise<Result<ImportedRunReport>>;
  /** The run's result ZIPs in the data folder's exports/, under the name `exportRun` gives them (`<runId>.zip`). */
  listZips(req: RunRef): Promise<Result<readonly ExportFile[]>>;
}

//#endregion
//#region events

export interface RunProgress {
  readonly runId: string;
  readonly status: RunStatus;
  readonly done: number;
  readonly total: number;
  /**
   * Tokens generated in this session (since the run was started or last resumed, in-flight responses included) per
   * second of this session's generating time: the speed now, whatever earlier sessions ran at. Null until this
   * session has generated a token (the model still loading).
   */
  readonly tokensPerSecond: number | null;
  /** Seconds left; null when unknown. */
  readonly etaSeconds: number | null;
  /**
   * Generating time of the whole run, seconds: every earlier session's (stored with the run) plus this one's so far.
   * Loading the model is not counted; on the final event it is the run's stored wall time (`RunFigures.wallSeconds`,
   * performance.json's `wall_seconds`).
   */
  readonly elapsedSeconds: number;
  /**
   * The backend as `RunSummary.backendLabel` words it ("CPU backend", "CUDA: NVIDIA H200"), on every event once
   * this session's model has loaded; absent before (the run's stored label may be an earlier session's).
   */
  readonly backendLabel?: string;
  /** Where the runtime keeps the weights (`RunDetail.residency`), with `backendLabel`. */
  readonly residency?: string;
  /** Accuracies over the responses scored so far, when the engine sends them. */
  readonly accuracies?: Accuracies | null;
  /** Text generated so far for an in-flight prompt, for live streaming; absent between prompts. */
  readonly partial?: { readonly key: number; readonly text: string };
  readonly error?: string;
}

export interface RunResponseEvent {
  readonly runId: string;
  readonly row: ResponseRow;
}

/** A stored run was deleted (`runs:delete`, from any window or browser tab). */
export interface RunDeletedEvent {
  readonly runId: string;
}

/** A run's label was set or cleared (`runs:setLabel`, from any window or browser tab, or `horizon label`). */
export interface RunLabelEvent {
  readonly runId: string;
  readonly label: string | null;
}

/** A run was imported from a result ZIP (`export:importRun`, from any window or browser tab). */
export interface RunImportedEvent {
  readonly runId: string;
}

/** A campaign was imported from a campaign ZIP or deleted (`perf:importZip`, `perf:delete`, from any window). */
export interface CampaignEvent {
  readonly campaignId: string;
}

/** A campaign's label was set or cleared (`perf:setLabel`, from any window, or `horizon label --campaign`). */
export interface CampaignLabelEvent {
  readonly campaignId: string;
  readonly label: string | null;
}

//#region perf

export interface StartPerfRequest {
  readonly modelId: string;
  /** GPU expert budgets in GiB, one configuration each after full residency (CUDA only). */
  readonly budgetsGiB?: readonly number[];
  /** The campaign's label (as `perf:setLabel` takes it); none when omitted or empty. */
  readonly label?: string;
}

export interface PerfRef {
  readonly campaignId: string;
}

export interface SetCampaignLabelRequest {
  readonly campaignId: string;
  /** The new label, trimmed when stored; empty clears it. */
  readonly label: string;
}

export interface DeleteCampaignRequest {
  readonly campaignId: string;
  /** Also delete the campaign's ZIP in the data folder's exports/ (what `perf:listZips` lists); default false. */
  readonly deleteExport?: boolean;
}

export interface DeletedCampaign {
  readonly campaignId: string;
  /** Measured requests deleted with it. */
  readonly requests: number;
  /** Absolute paths of the campaign ZIPs deleted; empty unless `deleteExport` was asked for. */
  readonly deletedFiles: readonly string[];
  /** One line per campaign ZIP that could not be deleted (the campaign itself is deleted all the same). */
  readonly fileErrors: readonly string[];
}

/** Progress of a campaign: pushed as `perf:onDidProgress`. */
export interface PerfCampaignProgress {
  readonly campaignId: string;
  readonly status: PerfStatus;
  readonly config: number;
  readonly configs: number;
  readonly done: number;
  readonly total: number;
  readonly message: string;
  readonly error?: string;
}

/**
 * Performance campaigns (`horizon perf`): one at a time, never beside a run (they share the runtime worker and the
 * GPU, and each would skew the other's figures).
 */
export interface PerfApi {
  start(req: StartPerfRequest): Promise<Result<PerfCampaign>>;
  cancel(req: PerfRef): Promise<Result<void>>;
  /** Newest first. */
  list(): Promise<Result<readonly PerfCampaign[]>>;
  get(req: PerfRef): Promise<Result<PerfCampaignDetail>>;
  /** Writes the campaign's ZIP into the data folder's exports/ (what `horizon verify` checks). */
  exportZip(req: PerfRef): Promise<Result<ExportedZip>>;
  /** The campaign's ZIP in the data folder's exports/ (`<campaign id>.zip`, the name exportZip gives it), if any. */
  listZips(req: PerfRef): Promise<Result<readonly ExportFile[]>>;
  /**
   * Adds a campaign ZIP's campaign (another machine's, a colleague's) to the list, once it verifies as `horizon
   * verify` has it; refused when it does not, is a result ZIP, or its id is stored already. Every UI is told as
   * `perf:onDidImport`.
   */
  importZip(req: VerifyRequest): Promise<Result<PerfCampaign>>;
  /**
   * Deletes a campaign with its requests in one transaction, and with `deleteExport` its ZIP in exports/; a running
   * one is refused (cancel it first). Every UI is told as `perf:onDidDelete`.
   */
  delete(req: DeleteCampaignRequest): Promise<Result<DeletedCampaign>>;
  /** Labels a campaign (any, running or imported), or clears its label; every UI is told as `perf:onDidLabel`. */
  setLabel(req: SetCampaignLabelRequest): Promise<Result<PerfCampaign>>;
}

//#endregion

/** Event name → payload, pushed from the services to every UI. */
export interface EventMap {
  'models:onDidProgress': PrepareProgress;
  'runs:onDidProgress': RunProgress;
  'runs:onDidResponse': RunResponseEvent;
  'runs:onDidDelete': RunDeletedEvent;
  'runs:onDidImport': RunImportedEvent;
  'runs:onDidLabel': RunLabelEvent;
  'perf:onDidProgress': PerfCampaignProgress;
  'perf:onDidImport': CampaignEvent;
  'perf:onDidDelete': CampaignEvent;
  'perf:onDidLabel': CampaignLabelEvent;
}

export type EventName = keyof EventMap;

const EVENTS: { readonly [E in EventName]: true } = {
  'models:onDidProgress': true,
  'runs:onDidProgress': true,
  'runs:onDidResponse': true,
  'runs:onDidDelete': true,
  'runs:onDidImport': true,
  'runs:onDidLabel': true,
  'perf:onDidProgress': true,
  'perf:onDidImport': true,
  'perf:onDidDelete': true,
  'perf:onDidLabel': true,
};

/** Every event name: the ones the preload lets a window subscribe to. */
export const EVENT_NAMES: readonly EventName[] = Object.keys(EVENTS) as EventName[];

/** How a service publishes an event; the host (Electron main or `horizon serve`) fans it out. */
export type EmitEvent = <E extends EventName>(event: E, payload: EventMap[E]) => void;

//#endregion
//#region channels

/** All services, keyed by the channel prefix. */
export interface Api {
  readonly system: SystemApi;
  readonly models: ModelsApi;
  readonly runs: RunsApi;
  readonly export: ExportApi;
  readonly perf: PerfApi;
}

export type ServiceName = keyof Api;

/** Every request channel, `service:method`. */
export type Channel = { [S in ServiceName]: `${S}:${Extract<keyof Api[S], string>}` }[ServiceName];

type MethodOf<C extends Channel> = C extends `${infer S extends ServiceName}:${infer M}`
  ? M extends keyof Api[S]
    ? Api[S][M]
    : never
  : never;

/** The request payload of a channel (`undefined` for methods without one). */
export type RequestOf<C extends Channel> =
  MethodOf<C> extends (...args: infer A) => unknown ? (A extends [infer P] ? P : undefined) : never;

/** The success value of a channel. */
export type ResponseOf<C extends Channel> =
  MethodOf<C> extends (...args: never[]) => Promise<Result<infer T>> ? T : never;

/** Calls `service:method` with its payload; the transport (IPC or HTTP) behind `invoke`. */
export type Invoke = <C extends Channel>(channel: C, payload: RequestOf<C>) => Promise<Result<ResponseOf<C>>>;

/** Splits "runs:get" into its service and method. */
export function splitChannel(channel: Channel): { service: ServiceName; method: string } {
  const i = channel.indexOf(':');
  return { service: channel.slice(0, i) as ServiceName, method: channel.slice(i + 1) };
}

//#endregion
