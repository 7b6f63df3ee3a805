import { isNativeError } from '../../worker/runtime/binding.js';
import { packModel } from '../../worker/runtime/pack.js';
import type { PackProgress } from '../../worker/runtime/pack.js';
import { abortOnSignals, abortWhenOrphaned, intOption, parseCommandArgs, usageError } from '../command-args.js';

export const summary = 'pack an OLMoE checkpoint to qpacked-v2 INT4 experts (writes horizon-manifest.json last)';

const USAGE =
  'usage: horizon pack --model SRC --out DST [--group-size G] [--threads N] [--repo R --revision SHA] [--progress-json]\n' +
  '  --model          source folder (config.json + BF16/F16/F32 *.safetensors)\n' +
  '  --out            output folder (created; an existing manifest is removed first)\n' +
  '  --group-size     INT4 group size (default 32, else 16 or 8: the largest dividing every expert width)\n' +
  '  --threads        packer threads (default one per physical core this process may use)\n' +
  '  --repo/--revision  recorded in the manifest source (null when not given)\n' +
  '  --progress-json  print {"type":"progress","phase":"pack"|"hash","doneBytes","totalBytes"} lines and a final {"type":"done"}';

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'pack',
    USAGE,
    args,
    {
      model: { type: 'string' },
      out: { type: 'string' },
      'group-size': { type: 'string' },
      threads: { type: 'string' },
      repo: { type: 'string' },
      revision: { type: 'string' },
      'shard-bytes': { type: 'string' },
      'progress-json': { type: 'boolean' },
    },
    { required: ['model', 'out'] },
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let groupSize, threads, shardBytes;
  try {
    groupSize = intOption('group-size', values['group-size'], 1);
    threads = intOption('threads', values.threads, 1, 1024);
    shardBytes = intOption('shard-bytes', values['shard-bytes'], 1);
  } catch (e) {
    return usageError('pack', USAGE, (e as Error).message);
  }
  const json = values['progress-json'] === true;
  const cancel = abortOnSignals(['SIGTERM', 'SIGINT']);
  // Started by `horizon prepare` or the app: a parent killed outright must not leave the packer writing on.
  const stopWatch = json ? abortWhenOrphaned(() => cancel.abort()) : () => undefined;
  let lastPrint = 0;
  let lastPhase = '';
  let midLine = false;
  const onProgress = (p: PackProgress) => {
    const now = Date.now();
    const final = p.doneBytes === p.totalBytes;
    if (!final && p.phase === lastPhase && now - lastPrint < 200) return;
    lastPrint = now;
    lastPhase = p.phase;
    if (json) console.log(JSON.stringify({ type: 'progress', ...p }));
    else {
      process.stderr.write(`\r${p.phase} ${(p.doneBytes / 2 ** 20).toFixed(0)}/${(p.totalBytes / 2 ** 20).toFixed(0)} MiB${final ? '\n' : ''}`);
      midLine = !final;
    }
  };
  const t0 = performance.now();
  try {
    const manifest = await packModel({
      src: values.model,
      dst: values.out,
      groupSize,
      threads,
      shardBytes,
      repo: values.repo ?? null,
      revision: values.revision ?? null,
      onProgress,
      signal: cancel.signal,
    });
    const seconds = (performance.now() - t0) / 1000;
    const outBytes = manifest.outputs.reduce((a, f) => a + f.size, 0);
    if (json) {
      console.log(JSON.stringify({ type: 'done', outDir: values.out, groupSize: manifest.group_size, outputs: manifest.outputs.length, outputBytes: outBytes, seconds }));
    } else {
      console.log(`packed ${values.model} -> ${values.out}: group size ${manifest.group_size}, ${manifest.outputs.length} files, ${(outBytes / 2 ** 20).toFixed(1)} MiB, ${seconds.toFixed(1)} s`);
    }
    return 0;
  } catch (e) {
    const message = cancel.signal.aborted ? 'cancelled' : (e as Error).message;
    // The runtime's status goes with the message, so the app acts on it without reading the message.
    if (json) console.log(JSON.stringify({ type: 'error', message, ...(isNativeError(e) ? { code: e.code } : {}) }));
    // The progress line has no newline yet: the error goes on a line of its own.
    if (midLine) process.stderr.write('\n');
    console.error(`horizon pack: ${message}`);
    return cancel.signal.aborted ? 130 : 1;
  } finally {
    stopWatch();
    cancel.dispose();
  }
}
