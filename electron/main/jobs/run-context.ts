import path from 'node:path';

import { ChatTokenizer } from '../../node/chat-tokenizer.js';
import { readJsonObject } from './model-source.js';

/** Context sizes are rounded up to a multiple of this, so runs with nearby needs share one loaded model. */
export const CONTEXT_STEP = 256;

let cached: { modelDir: string; tokenizer: Promise<ChatTokenizer> } | undefined;

function tokenizerFor(modelDir: string): Promise<ChatTokenizer> {
  if (cached?.modelDir !== modelDir) {
    const tokenizer = ChatTokenizer.load(modelDir);
    cached = { modelDir, tokenizer };
    tokenizer.catch(() => {
      if (cached?.tokenizer === tokenizer) cached = undefined;
    });
  }
  return cached.tokenizer;
}

async function maxPositions(modelDir: string): Promise<number | undefined> {
  const n = (await readJsonObject(path.join(modelDir, 'config.json')))?.max_position_embeddings;
  return Number.isInteger(n) && (n as number) > 0 ? (n as number) : undefined;
}

/**
 * The KV room per sequence a run needs: its longest prompt after the chat template plus the new-token budget,
 * rounded up to CONTEXT_STEP and capped at config.json's max_position_embeddings. Reserving this instead of the
 * model's full context is what lets a GPU keep more experts resident.
 */
export async function runContextTokens(modelDir: string, prompts: readonly string[], maxNewTokens: number): Promise<number> {
  const tokenizer = await tokenizerFor(modelDir);
  let longest = 0;
  for (const p of prompts) longest = Math.max(longest, tokenizer.encodeChat(p).tokenIds.length);
  const need = Math.ceil((longest + maxNewTokens) / CONTEXT_STEP) * CONTEXT_STEP;
  const cap = await maxPositions(modelDir);
  return cap === undefined ? need : Math.min(need, cap);
}
