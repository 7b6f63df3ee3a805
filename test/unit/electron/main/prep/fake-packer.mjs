// Stands in for `node scripts/horizon.mjs pack … --progress-json` in the preparation tests: same arguments, same
// JSON progress lines, horizon-manifest.json written last. FAKE_PACKER_DELAY_MS slows it so a test can abort mid-pack;
// FAKE_PACKER_FAIL=1 makes it exit 3 with an error message, status:<rt_status> report that runtime status; FAKE_PACKER_SOURCE_SHA records that sha256 for every
// source file read; FAKE_PACKER_ARGS_OUT names a file to append its arguments to (one JSON line per run).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
if (args[0] !== 'pack') process.exit(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const model = opt('--model');
const out = opt('--out');
const delay = Number(process.env.FAKE_PACKER_DELAY_MS ?? '0');
if (process.env.FAKE_PACKER_ARGS_OUT) fs.appendFileSync(process.env.FAKE_PACKER_ARGS_OUT, `${JSON.stringify(args)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
if (process.env.FAKE_PACKER_FAIL === '1') {
  console.error('fake packer: injected failure');
  process.exit(3);
}
if (process.env.FAKE_PACKER_FAIL?.startsWith('status:')) {
  // As `horizon pack --progress-json` reports a runtime error: its status beside the message.
  const code = process.env.FAKE_PACKER_FAIL.slice('status:'.length);
  console.log(JSON.stringify({ type: 'error', message: `model.safetensors: the packer says ${code}`, code }));
  console.error(`horizon pack: model.safetensors: the packer says ${code}`);
  process.exit(1);
}
if (process.env.FAKE_PACKER_FAIL === 'ENOSPC') {
  console.error('Error: ENOSPC: no space left on device, write');
  process.exit(1);
}
const config = JSON.parse(fs.readFileSync(path.join(model, 'config.json'), 'utf8'));
const groupSize = Number(opt('--group-size') ?? ([32, 16, 8].find((g) => config.hidden_size % g === 0 && config.intermediate_size % g === 0)));
fs.mkdirSync(out, { recursive: true });
const outputs = [];
const entry = (name, bytes) => ({ path: name, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
const put = (name, bytes) => {
  fs.writeFileSync(path.join(out, name), bytes);
  outputs.push(entry(name, bytes));
};
// Like the real packer, the sources it read: the shards (by the index when there is one), the metadata, the index.
const indexFile = path.join(model, 'model.safetensors.index.json');
const shardNames = fs.existsSync(indexFile)
  ? [...new Set(Object.values(JSON.parse(fs.readFileSync(indexFile, 'utf8')).weight_map))]
  : fs.readdirSync(model).filter((n) => n.endsWith('.safetensors')).sort();
const sourceNames = [
  ...shardNames,
  ...['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'generation_config.json'].filter((n) => fs.existsSync(path.join(model, n))),
  ...(fs.existsSync(indexFile) ? ['model.safetensors.index.json'] : []),
];
const sources = sourceNames.map((n) => ({ ...entry(n, fs.readFileSync(path.join(model, n))), ...(process.env.FAKE_PACKER_SOURCE_SHA ? { sha256: process.env.FAKE_PACKER_SOURCE_SHA } : {}) }));
for (const name of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'generation_config.json']) {
  if (fs.existsSync(path.join(model, name))) put(name, fs.readFileSync(path.join(model, name)));
}
const total = 4;
for (let i = 1; i <= total; i++) {
  await sleep(delay);
  console.log(JSON.stringify({ type: 'progress', phase: 'pack', doneBytes: i, totalBytes: total }));
}
put('model-qpacked-00001-of-00001.safetensors', Buffer.from('fake packed weights'));
// As the real packer reports hashing: the shards hashed while packing count at once.
console.log(JSON.stringify({ type: 'progress', phase: 'hash', doneBytes: 3, totalBytes: 4 }));
console.log(JSON.stringify({ type: 'progress', phase: 'hash', doneBytes: 4, totalBytes: 4 }));
const manifest = {
  format: 'qpacked-v2',
  group_size: groupSize,
  codebook: 'hq4nl',
  tool: 'horizon-runmap',
  tool_version: 'fake',
  source: { repo: opt('--repo') ?? null, revision: opt('--revision') ?? null, files: sources },
  outputs,
  created_at: new Date().toISOString(),
};
fs.writeFileSync(path.join(out, 'horizon-manifest.json.tmp'), JSON.stringify(manifest));
fs.renameSync(path.join(out, 'horizon-manifest.json.tmp'), path.join(out, 'horizon-manifest.json'));
console.log(JSON.stringify({ type: 'done' }));
