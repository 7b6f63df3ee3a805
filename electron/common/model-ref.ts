/** A Hub repository and revision as typed: what the services accept, and what each screen says when they do not. */

import { DEFAULT_MODEL_REPO } from './ipc-contract.js';

export const REPO_PATTERN = /^[\w.-]+\/[\w.-]+$/;
export const REVISION_PATTERN = /^[\w./-]+$/;
const EXAMPLE = DEFAULT_MODEL_REPO;

/** What is wrong with `repo` as an owner/name Hub repository, in a sentence for the field; null when nothing is. */
export function repoProblem(repo: string): string | null {
  const t = repo.trim();
  if (!t) return `Enter a repository as owner/name, e.g. ${EXAMPLE}.`;
  const url = /^https?:\/\/(?:www\.)?huggingface\.co\/([^/?#]+\/[^/?#]+)/.exec(t);
  if (url) return `Enter the repository, not its web address: ${url[1]}.`;
  if (/^https?:\/\//.test(t)) return `Enter a Hugging Face repository as owner/name, e.g. ${EXAMPLE}.`;
  if (!t.includes('/')) return `Add the owner: a repository is owner/name, e.g. ${EXAMPLE}.`;
  if (t.length > 200) return 'A repository name is at most 200 characters.';
  if (!REPO_PATTERN.test(t)) return 'Use letters, digits, ".", "-" and "_" on each side of a single "/".';
  return null;
}

/** What is wrong with `revision` (a branch, tag or commit sha); null when nothing is. */
export function revisionProblem(revision: string): string | null {
  const t = revision.trim();
  if (!t) return 'Enter a branch, tag or commit sha (main, or the pinned commit).';
  if (t.length > 200) return 'A revision is at most 200 characters.';
  if (!REVISION_PATTERN.test(t)) return 'A branch, tag or commit sha: letters, digits, ".", "-", "_" and "/".';
  return null;
}

/** The weights a model id names, as the app says them: "INT4 g32" (its group size) or "BF16". */
export function weightsLabel(modelId: string, weights: 'int4' | 'bf16'): string {
  if (weights === 'bf16') return 'BF16';
  const g = /\/int4-g(\d+)$/.exec(modelId)?.[1];
  return g ? `INT4 g${g}` : 'INT4';
}
