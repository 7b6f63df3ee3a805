import { loadNativeBinding } from '../../electron/worker/runtime/binding.js';

/** Whether the native addon is built with its runtime (tests that run models skip, and say so, without it). */
export function addonHasRuntime(): boolean {
  try {
    return typeof (loadNativeBinding() as unknown as { loadModel?: unknown }).loadModel === 'function';
  } catch {
    return false;
  }
}
