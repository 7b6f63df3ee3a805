import path from 'node:path';

import { ChatTokenizer } from '../../node/chat-tokenizer.js';
import { readJsonObject } from './model-source.js';

/** Context sizes are rounded up to a multiple of this, so runs with nearby needs share one loaded model. */
export const CONTEXT_STEP = 256;

// The chat-form token count of each prompt seen, too: a run is sized when it is created (its automatic batch) and
// again when it executes, and encoding all 541 prompts blocks main's event loop.
let cached: { modelDir: string; tokenizer: Promise<ChatTokenizer>; lengths: Map<string, number> } | undefined;

function tokenizerFor(modelDir: string): NonNullable<typeof cached> {
  if (cached?.modelDir !== modelDir) {
    const tokenizer = ChatTokenizer.load(modelDir);
    cached = { modelDir, tokenizer, lengths: new Map() };
    tokenizer.catch(() => {
      if (cached?.tokenizer === tokenizer) cached = undefined;
    });
  }
  return cached;
}

async function maxPositions(modelDir: string): Promise<number | undefined> {
  const n = (await readJsonObject(path.join(modelDir, 'config.json')))?.max_position_embeddings;
  return Number.isInteger(n) && (n as number) > 0 ? (n as number) : undefined;
}

/** Each prompt's token count after the chat template. */
async function chatLengths(modelDir: string, prompts: readonly string[]): Promise<number[]> {
  const { tokenizer: loading, lengths } = tokenizerFor(modelDir);
  const tokenizer = await loading;
  return prompts.map((p) => {
    let n = lengths.get(p);
    if (n === undefined) {
      n = tokenizer.encodeChat(p).tokenIds.length;
      lengths.set(p, n);
    }
    return n;
  });
}

/**
 * The KV room per sequence a run needs: its longest prompt after the chat template plus the new-token budget,
 * rounded up to CONTEXT_STEP and capped at config.json's max_position_embeddings. Reserving this instead of the
 * model's full context is what lets a GPU keep more experts resident.
 */
export async function runContextTokens(modelDir: string, prompts: readonly string[], maxNewTokens: number): Promise<number> {
  const longest = Math.max(0, ...(await chatLengths(modelDir, prompts)));
  const need = Math.ceil((longest + maxNewTokens) / CONTEXT_STEP) * CONTEXT_STEP;
  const cap = await maxPositions(modelDir);
  return cap === undefined ? need : Math.min(need, cap);
}

/**
 * The prompts longer after the chat template than config.json's max_position_embeddings, with their token counts:
 * the runtime refuses a generate job holding one, so a run must not start with them.
 */
export async function promptsOverContext(
  modelDir: string,
  prompts: readonly string[],
): Promise<{ readonly limit: number; readonly over: readonly { readonly index: number; readonly tokens: number }[] }> {
  const cap = await maxPositions(modelDir);
  if (cap === undefined) return { limit: Infinity, over: [] };
  const lengths = await chatLengths(modelDir, prompts);
  return { limit: cap, over: lengths.flatMap((tokens, index) => (tokens > cap ? [{ index, tokens }] : [])) };
}
