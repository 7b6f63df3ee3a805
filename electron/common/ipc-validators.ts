/**
 * Runtime validation of every request payload in the IPC contract, applied where a request arrives (ipcMain
 * handlers and the `horizon serve` HTTP transport). A tiny schema helper keeps each request's shape next to its type.
 * To add a channel: add an entry to REQUEST_SCHEMAS; the `satisfies` clause fails to compile until you do.
 */
import { isRecord } from './is-record.js';
import { RESPONSE_ENDINGS, RESPONSE_SORT_KEYS, type AssetKind, type Channel, type RequestOf } from './ipc-contract.js';
import { REPO_PATTERN, REVISION_PATTERN } from './model-ref.js';
import { err, ok, type Result } from './result.js';
import { RUN_BATCH, RUN_EXPERT_BUDGET_MIB, RUN_MAX_NEW_TOKENS, RUN_PROMPTS } from './run-settings.js';
import { MAX_CUDA_DEVICE } from './worker-protocol.js';

/** Checks a value, returning null when valid or a message naming the offending field. */
export interface Schema<T> {
  readonly check: (value: unknown, path: string) => string | null;
  /** Phantom: the type a valid value has. */
  readonly _type?: T;
}

export function str(opts: { min?: number; max?: number; pattern?: RegExp } = {}): Schema<string> {
  const { min = 0, max = 4096, pattern } = opts;
  return {
    check: (v, p) => {
      if (typeof v !== 'string') return `${p} must be a string`;
      if (v.length < min) return min === 1 ? `${p} must not be empty` : `${p} must be at least ${min} characters`;
      if (v.length > max) return `${p} must be at most ${max} characters`;
      if (pattern && !pattern.test(v)) return `${p} has an invalid format`;
      return null;
    },
  };
}

export function int(min: number, max: number): Schema<number> {
  return {
    check: (v, p) => {
      if (typeof v !== 'number' || !Number.isInteger(v)) return `${p} must be an integer`;
      if (v < min || v > max) return `${p} must be between ${min} and ${max}`;
      return null;
    },
  };
}

export function num(min: number, max: number): Schema<number> {
  return {
    check: (v, p) => {
      if (typeof v !== 'number' || !Number.isFinite(v)) return `${p} must be a number`;
      if (v < min || v > max) return `${p} must be between ${min} and ${max}`;
      return null;
    },
  };
}

export function bool(): Schema<boolean> {
  return { check: (v, p) => (typeof v === 'boolean' ? null : `${p} must be true or false`) };
}

export function oneOf<const T extends string>(...values: T[]): Schema<T> {
  return {
    check: (v, p) =>
      typeof v === 'string' && (values as string[]).includes(v) ? null : `${p} must be one of ${values.join(', ')}`,
  };
}

export function arrayOf<T>(item: Schema<T>, maxItems = 1000): Schema<readonly T[]> {
  return {
    check: (v, p) => {
      if (!Array.isArray(v)) return `${p} must be an array`;
      if (v.length > maxItems) return `${p} must have at most ${maxItems} items`;
      for (let i = 0; i < v.length; i++) {
        const e = item.check(v[i], `${p}[${i}]`);
        if (e) return e;
      }
      return null;
    },
  };
}

type Shape = Record<string, Schema<unknown> | Optional<unknown>>;

/** A field that may be absent (or undefined); null is rejected. */
export interface Optional<T> {
  readonly optional: Schema<T>;
}

export function optional<T>(schema: Schema<T>): Optional<T> {
  return { optional: schema };
}

type Infer<S> = S extends Schema<infer T> ? T : S extends Optional<infer T> ? T | undefined : never;
type RequiredKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? never : K }[keyof S];
type OptionalKeys<S extends Shape> = Exclude<keyof S, RequiredKeys<S>>;
type ObjectOf<S extends Shape> = { readonly [K in RequiredKeys<S>]: Infer<S[K]> } & {
  readonly [K in OptionalKeys<S>]?: Infer<S[K]>;
};

/** A plain object with exactly these fields; unknown fields are rejected so typos surface. */
export function object<S extends Shape>(shape: S): Schema<ObjectOf<S>> {
  return {
    check: (v, p) => {
      if (!isRecord(v)) return `${p} must be an object`;
      for (const key of Object.keys(v)) if (!Object.hasOwn(shape, key)) return `${p}.${key} is not an allowed field`;
      for (const [key, field] of Object.entries(shape)) {
        const value = v[key];
        if ('optional' in field) {
          if (value === undefined) continue;
          const e = field.optional.check(value, `${p}.${key}`);
          if (e) return e;
        } else {
          const e = field.check(value, `${p}.${key}`);
          if (e) return e;
        }
      }
      return null;
    },
  };
}

/** Methods without a request accept nothing (undefined, null or `{}` from JSON transports). */
export const none: Schema<undefined> = {
  check: (v, p) =>
    v === undefined || v === null || (isRecord(v) && Object.keys(v).length === 0) ? null : `${p} must be empty`,
};

const id = str({ min: 1, max: 200, pattern: /^(?!.*\.\.)[\w.@/:+-]+$/ });
const absPathOrRelative = str({ min: 1, max: 4096 });
const repo = str({ min: 3, max: 200, pattern: REPO_PATTERN });
const revision = str({ min: 1, max: 200, pattern: REVISION_PATTERN });
const assetKind = oneOf<AssetKind>('ifeval', 'punkt');
const runRef = object({ runId: id });

type Schemas = { readonly [C in Channel]: Schema<RequestOf<C>> };

/** The schema of each channel's request payload. */
export const REQUEST_SCHEMAS = {
  'system:check': none,
  'system:pickPath': object({
    kind: oneOf('file', 'folder'),
    title: str({ min: 1, max: 200 }),
    filters: optional(
      arrayOf(object({ name: str({ min: 1, max: 100 }), extensions: arrayOf(str({ min: 1, max: 20, pattern: /^(\*|\w+)$/ }), 20) }), 10),
    ),
  }),
  'models:list': none,
  'models:details': object({ modelId: id }),
  'models:delete': object({ modelId: id, scope: oneOf('variant', 'model') }),
  'models:prepare': object({
    repo,
    revision,
    token: optional(str({ max: 400 })),
    pack: optional(bool()),
  }),
  'models:cancel': object({ jobId: id }),
  'models:downloadAssets': object({ kinds: optional(arrayOf(assetKind, 2)) }),
  'models:importAssets': object({ kind: assetKind, path: absPathOrRelative }),
  'models:checkQuality': object({ modelId: id, limit: optional(int(1, 541)) }),
  'runs:start': object({
    modelId: id,
    limit: optional(int(RUN_PROMPTS.min, RUN_PROMPTS.max)),
    batch: optional(int(RUN_BATCH.min, RUN_BATCH.max)),
    maxNewTokens: optional(int(RUN_MAX_NEW_TOKENS.min, RUN_MAX_NEW_TOKENS.max)),
    expertBudgetMiB: optional(int(RUN_EXPERT_BUDGET_MIB.min, RUN_EXPERT_BUDGET_MIB.max)),
    cudaDevice: optional(int(0, MAX_CUDA_DEVICE)),
    label: optional(str({ max: 1000 })),
  }),
  'runs:cancel': runRef,
  'runs:resume': runRef,
  'runs:list': none,
  'runs:get': runRef,
  'runs:responses': object({
    runId: id,
    instructionId: optional(str({ min: 1, max: 100 })),
    verdict: optional(oneOf('pass', 'fail')),
    mode: optional(oneOf('strict', 'loose')),
    text: optional(str({ max: 500 })),
    finish: optional(oneOf(...RESPONSE_ENDINGS)),
    sortBy: optional(oneOf(...RESPONSE_SORT_KEYS)),
    descending: optional(bool()),
    offset: optional(int(0, 1_000_000)),
    limit: optional(int(1, 200)),
  }),
  'runs:performance': runRef,
  'perf:start': object({ modelId: id, budgetsGiB: optional(arrayOf(num(0.25, 1024), 16)), label: optional(str({ max: 1000 })) }),
  'perf:cancel': object({ campaignId: id }),
  'perf:list': none,
  'perf:get': object({ campaignId: id }),
  'perf:exportZip': object({ campaignId: id }),
  'perf:importZip': object({ path: absPathOrRelative }),
  'perf:delete': object({ campaignId: id, deleteExport: optional(bool()) }),
  'perf:listZips': object({ campaignId: id }),
  'perf:setLabel': object({ campaignId: id, label: str({ max: 1000 }) }),
  'runs:response': object({ runId: id, key: int(0, Number.MAX_SAFE_INTEGER) }),
  'runs:compare': object({ runA: id, runB: id }),
  'runs:delete': object({ runId: id, deleteExport: optional(bool()) }),
  // Longer than a label may be, so the service's own sentence (label.ts) says what is wrong with a long one.
  'runs:setLabel': object({ runId: id, label: str({ max: 1000 }) }),
  'export:exportRun': object({ runId: id, path: optional(absPathOrRelative) }),
  'export:verify': object({ path: absPathOrRelative }),
  'export:importRun': object({ path: absPathOrRelative }),
  'export:listZips': runRef,
} as const satisfies Schemas;

/** Every request channel, for allowlists. */
export const CHANNELS = Object.keys(REQUEST_SCHEMAS) as Channel[];

export function isChannel(value: unknown): value is Channel {
  return typeof value === 'string' && Object.hasOwn(REQUEST_SCHEMAS, value);
}

/** Validates a payload arriving on `channel`; the error names the channel and the field. */
export function validateRequest<C extends Channel>(channel: C, payload: unknown): Result<RequestOf<C>> {
  const schema = (REQUEST_SCHEMAS as Schemas)[channel] as Schema<RequestOf<C>>;
  const problem = schema.check(payload, 'request');
  if (problem) return err('BAD_INPUT', `${channel}: ${problem}`);
  return ok((schema === none ? undefined : payload) as RequestOf<C>);
}
