/** How every window and command names the run or campaign a ZIP says it holds (`ZipSubject`). */

import { ENDING_TEXT, type CutCount, type ZipSubject } from './ipc-contract.js';
import { weightsLabel } from './model-ref.js';

/**
 * One line naming a ZIP's run or campaign: `run 20261206T205311-c5b042 "baseline g32": org/name @ 7f1c97f, INT4 g32,
 * CUDA: NVIDIA H200, started <when(createdAt)>`. What the ZIP does not say is left out.
 */
export function describeZipSubject(kind: 'result' | 'campaign', s: ZipSubject, when: (iso: string) => string): string {
  const what = kind === 'result' ? 'run' : 'campaign';
  const name = `${what} ${s.id ?? '(no id given)'}${s.label === null ? '' : ` ${JSON.stringify(s.label)}`}`;
  const revision = s.modelRevision === null ? null : /^[0-9a-f]{40}$/.test(s.modelRevision) ? s.modelRevision.slice(0, 7) : s.modelRevision;
  const model = s.modelRepo === null ? null : revision === null ? s.modelRepo : `${s.modelRepo} @ ${revision}`;
  const parts = [
    model,
    s.weights === null ? null : weightsLabel(s.modelId ?? '', s.weights),
    s.backendLabel,
    s.createdAt === null ? null : `started ${when(s.createdAt)}`,
  ].filter((p): p is string => p !== null);
  return parts.length === 0 ? name : `${name}: ${parts.join(', ')}`;
}

/** A result ZIP's cut count in words: "535 of 541 responses cut at max new tokens (32)". */
export function cutSentence(c: CutCount): string {
  return `${c.cut.toLocaleString('en-US')} of ${c.of.toLocaleString('en-US')} response${c.of === 1 ? '' : 's'} ${ENDING_TEXT.length} (${c.maxNewTokens.toLocaleString('en-US')})`;
}
