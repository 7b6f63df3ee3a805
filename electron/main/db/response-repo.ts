import type Database from 'better-sqlite3';

import type { ExpertCacheCounts, FinishReason, PeakMemoryScope } from '../../common/worker-protocol.js';

export interface StoredVerdict {
  readonly instructionId: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
  readonly strict: boolean;
  readonly loose: boolean;
}

export interface StoredResponse {
  readonly key: number;
  /** Index of the prompt in the dataset (keeps dataset order for exports). */
  readonly position: number;
  readonly prompt: string;
  readonly response: string;
  readonly tokens: number;
  readonly finishReason: FinishReason;
  readonly ttftMs: number | null;
  readonly decodeTokensPerSecond: number | null;
  readonly verdicts: readonly StoredVerdict[];
}

export interface StoredResponseWithPass extends StoredResponse {
  readonly strictPass: boolean;
  readonly loosePass: boolean;
}

/** Figures of one generate job (its responses may be stored one by one), added to the run's totals. */
export interface JobFigures {
  readonly wallMs: number;
  readonly peakMemoryBytes: number;
  /** What peakMemoryBytes measures; null where no figure came (the CPU backend, a job without the worker's figures). */
  readonly peakMemoryScope: PeakMemoryScope | null;
  readonly h2dBytes: number;
  /** CUDA: the expert cache's counts over the job; absent or null where none came (the CPU backend). */
  readonly expertCache?: ExpertCacheCounts | null;
}

/** Figures of one generated batch, added to the run's totals. */
export interface BatchFigures extends JobFigures {
  readonly generatedTokens: number;
}

export interface RunFigureTotals {
  /** Generate jobs whose figures were added. */
  readonly batches: number;
  readonly generatedTokens: number;
  readonly wallMs: number;
  readonly peakMemoryBytes: number;
  /** The scope of the job whose figure is the peak; null when none came with one. */
  readonly peakMemoryScope: PeakMemoryScope | null;
  readonly h2dBytes: number;
  /** Summed over the jobs that reported them; null when none did (the CPU backend, older runs). */
  readonly expertCache: ExpertCacheCounts | null;
  /** Mean over responses with a first token; null when none. */
  readonly meanTtftMs: number | null;
  /** Mean over responses with a decode rate; null when none. */
  readonly meanDecodeTokensPerSecond: number | null;
}

export interface InstructionCount {
  readonly instructionId: string;
  readonly count: number;
  readonly strictPassed: number;
  readonly loosePassed: number;
}

/** Prompt- and instruction-level totals and passes of a run's stored responses. */
export interface PassCounts {
  readonly prompts: number;
  readonly promptsStrict: number;
  readonly promptsLoose: number;
  readonly instructions: number;
  readonly instructionsStrict: number;
  readonly instructionsLoose: number;
}

export interface ResponseFilter {
  readonly instructionId?: string;
  readonly verdict?: 'pass' | 'fail';
  readonly mode?: 'strict' | 'loose';
  readonly text?: string;
  readonly finish?: FinishReason;
  /** 'position': dataset order, as exports and `horizon show` list them. */
  readonly sortBy?: 'key' | 'position' | 'instructions' | 'strict' | 'loose';
  readonly descending?: boolean;
  readonly offset?: number;
  /** Default 50; null: every match. */
  readonly limit?: number | null;
}

interface ResponseRow {
  key: number;
  position: number;
  prompt: string;
  response: string;
  tokens: number;
  finish_reason: string;
  ttft_ms: number | null;
  decode_tokens_per_second: number | null;
  strict_pass: number;
  loose_pass: number;
}

interface VerdictRow {
  key: number;
  instruction_id: string;
  kwargs_json: string;
  strict: number;
  loose: number;
}

/**
 * `s` with each lone UTF-16 surrogate replaced by U+FFFD, as UTF-8 (SQLite's text, the result ZIP's files) must hold
 * it; well-formed text is returned as it is. Stored unreplaced, SQLite would keep the surrogate's invalid bytes and
 * give back three U+FFFD for it.
 */
export function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** The responses aggregate of a run: responses, their verdicts and the run's figure totals. */
export class ResponseRepo {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    // SQLite's lower() folds ASCII only; searching "école" must find "ÉCOLE" as the query side's toLowerCase does.
    db.function('js_lower', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s));
  }

  /** Prepares each SQL text once per connection (each call site keeps one pluck/raw mode, so sharing is safe). */
  private sql(text: string): Database.Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  /** Stores a scored batch and adds its figures, all in one transaction. */
  insertBatch(runId: string, responses: readonly StoredResponse[], figures: BatchFigures, now = new Date().toISOString()): void {
    this.db.transaction(() => {
      this.insertResponses(runId, responses, { generatedTokens: figures.generatedTokens }, now);
      this.addJobFigures(runId, figures);
    })();
  }

  /**
   * Adds one generate job's wall time (what insertResponses did not already add), peak device memory and
   * host-to-device bytes to the run's totals.
   */
  addJobFigures(runId: string, figures: JobFigures): void {
    // SET expressions all read the row as it was, so the scope follows the job whose figure becomes the peak.
    this.sql(
      `UPDATE run_figures SET batches = batches + 1, wall_ms = wall_ms + ?,
         peak_memory_scope = CASE WHEN ? > peak_memory_bytes OR (peak_memory_scope IS NULL AND ? = peak_memory_bytes)
           THEN ? ELSE peak_memory_scope END,
         peak_memory_bytes = MAX(peak_memory_bytes, ?), h2d_bytes = h2d_bytes + ?,
         expert_hits = CASE WHEN ? IS NULL THEN expert_hits ELSE COALESCE(expert_hits, 0) + ? END,
         expert_misses = CASE WHEN ? IS NULL THEN expert_misses ELSE COALESCE(expert_misses, 0) + ? END,
         expert_evictions = CASE WHEN ? IS NULL THEN expert_evictions ELSE COALESCE(expert_evictions, 0) + ? END
       WHERE run_id = ?`,
    ).run(
      figures.wallMs, figures.peakMemoryBytes, figures.peakMemoryBytes, figures.peakMemoryScope, figures.peakMemoryBytes, figures.h2dBytes,
      ...[figures.expertCache?.hits, figures.expertCache?.misses, figures.expertCache?.evictions].flatMap((n) => [n ?? null, n ?? null]),
      runId,
    );
  }

  /**
   * Stores scored responses (each as soon as it finished, or a batch) with their generated tokens and, when given,
   * the generating time since the last call, in one transaction: a process killed mid-job keeps tokens and time
   * together, so the run's throughput stays honest.
   */
  insertResponses(
    runId: string,
    responses: readonly StoredResponse[],
    added: { readonly generatedTokens: number; readonly wallMs?: number },
    now = new Date().toISOString(),
  ): void {
    const insertResponse = this.sql(
      `INSERT INTO responses (run_id, key, position, prompt, response, tokens, finish_reason, ttft_ms,
         decode_tokens_per_second, strict_pass, loose_pass, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertVerdict = this.sql(
      'INSERT INTO verdicts (run_id, key, idx, instruction_id, kwargs_json, strict, loose) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const addTokens = this.sql('UPDATE run_figures SET generated_tokens = generated_tokens + ?, wall_ms = wall_ms + ? WHERE run_id = ?');
    const store = this.db.transaction(() => {
      for (const r of responses) {
        const strictPass = r.verdicts.every((v) => v.strict) ? 1 : 0;
        const loosePass = r.verdicts.every((v) => v.loose) ? 1 : 0;
        insertResponse.run(
          runId, r.key, r.position, wellFormed(r.prompt), wellFormed(r.response), r.tokens, r.finishReason,
          r.ttftMs, r.decodeTokensPerSecond, strictPass, loosePass, now,
        );
        r.verdicts.forEach((v, i) =>
          insertVerdict.run(runId, r.key, i, v.instructionId, JSON.stringify(v.kwargs), v.strict ? 1 : 0, v.loose ? 1 : 0),
        );
      }
      addTokens.run(added.generatedTokens, added.wallMs ?? 0, runId);
    });
    try {
      store();
    } catch (e) {
      // SQLite's messages ("database or disk is full") name no file; the run's error should say which.
      const code = (e as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_')) throw e;
      throw new Error(`${this.db.name}: ${(e as Error).message}`, { cause: e });
    }
  }

  storedKeys(runId: string): Set<number> {
    const rows = this.sql('SELECT key FROM responses WHERE run_id = ?').pluck().all(runId) as number[];
    return new Set(rows);
  }

  count(runId: string): number {
    return this.sql('SELECT COUNT(*) FROM responses WHERE run_id = ?').pluck().get(runId) as number;
  }

  private verdictsOf(runId: string, keys?: readonly number[]): Map<number, StoredVerdict[]> {
    const rows = (
      keys === undefined
        ? this.sql('SELECT key, instruction_id, kwargs_json, strict, loose FROM verdicts WHERE run_id = ? ORDER BY key, idx').all(runId)
        : this.sql(
              `SELECT key, instruction_id, kwargs_json, strict, loose FROM verdicts
               WHERE run_id = ? AND key IN (SELECT value FROM json_each(?)) ORDER BY key, idx`,
            )
            .all(runId, JSON.stringify(keys))
    ) as VerdictRow[];
    const out = new Map<number, StoredVerdict[]>();
    for (const v of rows) {
      const list = out.get(v.key) ?? [];
      list.push({
        instructionId: v.instruction_id,
        kwargs: JSON.parse(v.kwargs_json) as Record<string, unknown>,
        strict: v.strict === 1,
        loose: v.loose === 1,
      });
      out.set(v.key, list);
    }
    return out;
  }

  private withVerdicts(runId: string, rows: readonly ResponseRow[], verdicts: Map<number, StoredVerdict[]>): StoredResponseWithPass[] {
    return rows.map((r) => ({
      key: r.key,
      position: r.position,
      prompt: r.prompt,
      response: r.response,
      tokens: r.tokens,
      finishReason: r.finish_reason as FinishReason,
      ttftMs: r.ttft_ms,
      decodeTokensPerSecond: r.decode_tokens_per_second,
      strictPass: r.strict_pass === 1,
      loosePass: r.loose_pass === 1,
      verdicts: verdicts.get(r.key) ?? [],
    }));
  }

  /** Every response of a run in dataset order, with verdicts. */
  all(runId: string): StoredResponseWithPass[] {
    const rows = this.sql('SELECT * FROM responses WHERE run_id = ? ORDER BY position').all(runId) as ResponseRow[];
    return this.withVerdicts(runId, rows, this.verdictsOf(runId));
  }

  get(runId: string, key: number): StoredResponseWithPass | undefined {
    const row = this.sql('SELECT * FROM responses WHERE run_id = ? AND key = ?').get(runId, key) as ResponseRow | undefined;
    return row && this.withVerdicts(runId, [row], this.verdictsOf(runId, [key]))[0];
  }

  /**
   * A page of responses matching the filter, ordered by `sortBy` (key by default, as a number), and the number
   * matching in total. With `instructionId`, the verdict filter and the strict/loose order use that instruction's
   * verdict in each prompt (every occurrence must pass), not the prompt's.
   */
  page(runId: string, f: ResponseFilter): { total: number; items: StoredResponseWithPass[] } {
    const where = ['r.run_id = @runId'];
    const params: Record<string, unknown> = { runId };
    if (f.instructionId) {
      where.push('EXISTS (SELECT 1 FROM verdicts v WHERE v.run_id = r.run_id AND v.key = r.key AND v.instruction_id = @iid)');
      params.iid = f.instructionId;
    }
    const verdictOf = (mode: 'strict' | 'loose'): string =>
      f.instructionId
        ? `(SELECT MIN(v.${mode}) FROM verdicts v WHERE v.run_id = r.run_id AND v.key = r.key AND v.instruction_id = @iid)`
        : `r.${mode}_pass`;
    if (f.verdict) where.push(`${verdictOf(f.mode === 'loose' ? 'loose' : 'strict')} = ${f.verdict === 'pass' ? 1 : 0}`);
    if (f.text) {
      where.push(`(instr(js_lower(r.prompt), @text) > 0 OR instr(js_lower(r.response), @text) > 0)`);
      params.text = f.text.toLowerCase();
    }
    if (f.finish) {
      where.push('r.finish_reason = @finish');
      params.finish = f.finish;
    }
    const clause = where.join(' AND ');
    const total = this.sql(`SELECT COUNT(*) FROM responses r WHERE ${clause}`).pluck().get(params) as number;
    const order = {
      key: 'r.key',
      position: 'r.position',
      instructions: '(SELECT COUNT(*) FROM verdicts v WHERE v.run_id = r.run_id AND v.key = r.key)',
      strict: verdictOf('strict'),
      loose: verdictOf('loose'),
    }[f.sortBy ?? 'key'];
    const dir = f.descending ? 'DESC' : 'ASC';
    const rows = this.sql(`SELECT r.* FROM responses r WHERE ${clause} ORDER BY ${order} ${dir}, r.key ${dir} LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: f.limit === null ? -1 : (f.limit ?? 50), offset: f.offset ?? 0 }) as ResponseRow[];
    return { total, items: this.withVerdicts(runId, rows, this.verdictsOf(runId, rows.map((r) => r.key))) };
  }

  /** Per instruction id: how often it occurs among stored responses and how often it passed. */
  byInstruction(runId: string): InstructionCount[] {
    return (
      this.sql(
          `SELECT instruction_id, COUNT(*) AS count, SUM(strict) AS strict_passed, SUM(loose) AS loose_passed
           FROM verdicts WHERE run_id = ? GROUP BY instruction_id ORDER BY instruction_id`,
      ).all(runId) as { instruction_id: string; count: number; strict_passed: number; loose_passed: number }[]
    ).map((r) => ({ instructionId: r.instruction_id, count: r.count, strictPassed: r.strict_passed, loosePassed: r.loose_passed }));
  }

  /** Each stored prompt's instruction count and strict / loose passes (the accuracy intervals' clusters). */
  promptInstructionCounts(runId: string): { count: number; strict: number; loose: number }[] {
    return this.sql(
      'SELECT COUNT(*) AS count, SUM(strict) AS strict, SUM(loose) AS loose FROM verdicts WHERE run_id = ? GROUP BY key ORDER BY key',
    ).all(runId) as { count: number; strict: number; loose: number }[];
  }

  /** The stored responses by how they ended. */
  endings(runId: string): Record<FinishReason, number> {
    const counts: Record<FinishReason, number> = { stop: 0, length: 0, cancelled: 0 };
    const rows = this.sql('SELECT finish_reason, COUNT(*) AS n FROM responses WHERE run_id = ? GROUP BY finish_reason').all(runId) as { finish_reason: FinishReason; n: number }[];
    for (const r of rows) counts[r.finish_reason] = r.n;
    return counts;
  }

  /** Prompt- and instruction-level pass counts over the stored responses. */
  passCounts(runId: string): PassCounts {
    const p = this.sql('SELECT COUNT(*) AS n, COALESCE(SUM(strict_pass), 0) AS s, COALESCE(SUM(loose_pass), 0) AS l FROM responses WHERE run_id = ?')
      .get(runId) as { n: number; s: number; l: number };
    const i = this.sql('SELECT COUNT(*) AS n, COALESCE(SUM(strict), 0) AS s, COALESCE(SUM(loose), 0) AS l FROM verdicts WHERE run_id = ?')
      .get(runId) as { n: number; s: number; l: number };
    return { prompts: p.n, promptsStrict: p.s, promptsLoose: p.l, instructions: i.n, instructionsStrict: i.s, instructionsLoose: i.l };
  }

  /** Each stored response's timing, in the order they were stored. */
  performance(runId: string): { key: number; finishedAt: string; tokens: number; ttftMs: number | null; decodeTokensPerSecond: number | null }[] {
    const rows = this.sql(
      'SELECT key, created_at, tokens, ttft_ms, decode_tokens_per_second FROM responses WHERE run_id = ? ORDER BY created_at, position',
    ).all(runId) as { key: number; created_at: string; tokens: number; ttft_ms: number | null; decode_tokens_per_second: number | null }[];
    return rows.map((r) => ({
      key: r.key,
      finishedAt: r.created_at,
      tokens: r.tokens,
      ttftMs: r.ttft_ms !== null && r.ttft_ms >= 0 ? r.ttft_ms : null,
      decodeTokensPerSecond: r.decode_tokens_per_second !== null && r.decode_tokens_per_second > 0 ? r.decode_tokens_per_second : null,
    }));
  }

  figures(runId: string): RunFigureTotals {
    const f = this.sql('SELECT * FROM run_figures WHERE run_id = ?').get(runId) as
      | {
          batches: number; generated_tokens: number; wall_ms: number; peak_memory_bytes: number; peak_memory_scope: PeakMemoryScope | null; h2d_bytes: number;
          expert_hits: number | null; expert_misses: number | null; expert_evictions: number | null;
        }
      | undefined;
    const means = this.sql(
        `SELECT AVG(CASE WHEN ttft_ms >= 0 THEN ttft_ms END) AS ttft, AVG(CASE WHEN decode_tokens_per_second > 0 THEN decode_tokens_per_second END) AS tps
         FROM responses WHERE run_id = ?`,
      )
      .get(runId) as { ttft: number | null; tps: number | null };
    return {
      batches: f?.batches ?? 0,
      generatedTokens: f?.generated_tokens ?? 0,
      wallMs: f?.wall_ms ?? 0,
      peakMemoryBytes: f?.peak_memory_bytes ?? 0,
      peakMemoryScope: f?.peak_memory_scope ?? null,
      h2dBytes: f?.h2d_bytes ?? 0,
      expertCache: f && f.expert_hits !== null ? { hits: f.expert_hits, misses: f.expert_misses ?? 0, evictions: f.expert_evictions ?? 0 } : null,
      meanTtftMs: means.ttft,
      meanDecodeTokensPerSecond: means.tps,
    };
  }
}
