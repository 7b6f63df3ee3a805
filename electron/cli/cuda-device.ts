import { MAX_CUDA_DEVICE } from '../common/worker-protocol.js';

/** Parses `--device`: a CUDA device index as `horizon devices` lists them. Undefined gives undefined (the first). */
export function parseCudaDevice(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n > MAX_CUDA_DEVICE) {
    throw new Error(`--device must be a CUDA device index from 0 to ${MAX_CUDA_DEVICE}, got '${text}'`);
  }
  return n;
}
