import type { AppErrorCode } from './result.js';

/** Why a runtime call failed: `rt_status` in native/include/rt/rt-runtime.h, by name. */
export const NATIVE_STATUSES = [
  'invalid_request',
  'invalid_prompt',
  'model_invalid',
  'unsupported',
  'out_of_memory',
  'device_fault',
  'numeric_fault',
  'io_error',
  'cancelled',
  'internal',
] as const;
export type NativeStatus = (typeof NATIVE_STATUSES)[number];

export function isNativeStatus(v: unknown): v is NativeStatus {
  return (NATIVE_STATUSES as readonly unknown[]).includes(v);
}

/** What each runtime status is across a process boundary (the worker's answers, the packer child's error line). */
export const NATIVE_STATUS_CODES: Readonly<Record<NativeStatus, AppErrorCode>> = {
  invalid_request: 'BAD_INPUT',
  invalid_prompt: 'BAD_INPUT',
  model_invalid: 'MODEL_INVALID',
  unsupported: 'UNSUPPORTED',
  out_of_memory: 'OUT_OF_MEMORY',
  device_fault: 'DEVICE_FAULT',
  numeric_fault: 'INTERNAL',
  io_error: 'INTERNAL',
  cancelled: 'CANCELLED',
  internal: 'INTERNAL',
};
