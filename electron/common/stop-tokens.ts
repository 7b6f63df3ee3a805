/**
 * The token ids greedy generation stops at, from a model folder's JSON files. Main records them with a run before the
 * worker loads the model, and the worker reports them after loading: both derive them here so they cannot differ.
 */

type Json = Record<string, unknown>;

/** The text of a special token given as a string or as an added-token object `{ content }`. */
export function tokenContent(x: unknown): string | undefined {
  if (typeof x === 'string') return x;
  if (typeof x === 'object' && x !== null && typeof (x as Json).content === 'string') return (x as Json).content as string;
  return undefined;
}

function idList(x: unknown): number[] {
  if (Number.isInteger(x)) return [x as number];
  return Array.isArray(x) ? x.filter((v): v is number => Number.isInteger(v)) : [];
}

/** The parsed JSON files that name EOS tokens (absent files are undefined). */
export interface StopTokenSources {
  readonly tokenizerConfig?: Json | undefined;
  readonly config?: Json | undefined;
  readonly generationConfig?: Json | undefined;
}

/**
 * tokenizer_config.json's `eos_token` looked up with `idOf`, then config.json's and generation_config.json's
 * `eos_token_id` (an id or a list), deduplicated in that order. Throws naming `modelDir` when there is none.
 */
export function stopTokenIds(modelDir: string, src: StopTokenSources, idOf: (token: string) => number | undefined): number[] {
  const out = new Set<number>();
  const eos = tokenContent(src.tokenizerConfig?.eos_token);
  const eosId = eos ? idOf(eos) : undefined;
  if (eosId !== undefined && Number.isInteger(eosId)) out.add(eosId);
  for (const id of [...idList(src.config?.eos_token_id), ...idList(src.generationConfig?.eos_token_id)]) out.add(id);
  if (out.size === 0) throw new Error(`${modelDir}: no EOS token id in config.json, generation_config.json or tokenizer_config.json`);
  return [...out];
}

/** A token's id in a tokenizer.json object: its added tokens first, then the model vocabulary. */
export function tokenizerJsonIdOf(tokenizerJson: Json | undefined): (token: string) => number | undefined {
  return (token) => {
    const added = Array.isArray(tokenizerJson?.added_tokens) ? (tokenizerJson.added_tokens as { id?: unknown; content?: unknown }[]) : [];
    const hit = added.find((t) => t.content === token && Number.isInteger(t.id));
    const id = hit ? hit.id : (tokenizerJson?.model as { vocab?: Record<string, unknown> } | undefined)?.vocab?.[token];
    return Number.isInteger(id) ? (id as number) : undefined;
  };
}
