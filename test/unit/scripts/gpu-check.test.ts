/**
 * scripts/gpu-check.sh's control flow, which otherwise runs only on a lent GPU machine with minutes to spare: the
 * script runs here on a copy of the scripts against stand-ins for nvcc, nvidia-smi, cmake, ctest, the built programs,
 * compute-sanitizer and ncu (shell scripts that log how they were called and answer as the flags of a test ask), so a
 * broken branch, an unset variable or a wrong exit code shows up before a GPU session spends its time on it. The same
 * for scripts/gpu-peer.sh's comparison: the order of the runs and the figures and ratios it reads from llama-bench's
 * CSV, llama-batched-bench's JSON lines and our benchmark's JSON, in the shapes the pinned llama.cpp and bench-gpu
 * write them.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The built programs cmake --build makes: each logs its call; bench-gpu writes its --json file. */
const PROGRAM = `#!/usr/bin/env bash
echo "$(basename "$0") $*" >>"$CALLS"
if [ "$(basename "$0")" = bench-gpu ]; then
  while [ $# -gt 0 ]; do [ "$1" = --json ] && { printf '{\\n  "residency": "full",\\n  "b1": 500\\n}\\n' >"$2"; }; shift; done
  echo "decode b1 500 tok/s"
fi
exit 0
`;

const TOOLS: Record<string, string> = {
  nvcc: 'echo "Cuda compilation tools, release 13.0, V13.0.48"',
  'nvidia-smi': `case "$*" in
  "--query-gpu=compute_cap --format=csv,noheader") echo "9.0" ;;
  *) echo "name, compute_cap, memory.total [MiB], driver_version"; echo "NVIDIA H200, 9.0, 143771 MiB, 580.65" ;;
esac`,
  cmake: `echo "cmake $*" >>"$CALLS"
if [ "$1" = --build ]; then
  [ "\${FAKE_BUILD_FAILS:-0}" = 1 ] && { echo "error: something" ; exit 1; }
  for p in test-gpu-ops test-gpu-model bench-gpu peer-gguf; do cp "$FAKE_PROGRAM" "$2/$p"; chmod +x "$2/$p"; done
else
  while [ $# -gt 0 ]; do [ "$1" = -B ] && mkdir -p "$2"; shift; done
fi
exit 0`,
  ctest: `echo "ctest $*" >>"$CALLS"
[ -n "\${FAKE_CTEST_SKIP:-}" ] && echo "SKIP: no CUDA device ($FAKE_CTEST_SKIP)"
echo "100% tests passed, 0 tests failed out of 3"
exit 0`,
  'compute-sanitizer': `echo "compute-sanitizer $*" >>"$CALLS"
tool="$2"
case " \${FAKE_SANITIZER_ERRORS:-} " in *" $tool "*) echo "========= ERROR SUMMARY: 1 error"; exit 9 ;; esac
echo "========= ERROR SUMMARY: 0 errors"
exit 0`,
  // The per-kernel summary's lines in the shape the script's filter reads: the kernel's line with its launches, then
  // its duration metric's line.
  ncu: `echo "ncu $*" >>"$CALLS"
echo "==PROF== Disconnected from process 1"
if [ -n "\${FAKE_NCU_OTHER:-}" ]; then echo "attention_kernel 4 launches 3.2 us"; exit 0; fi
echo "  attention_kernel(attention_args) (128, 1, 1)x(256, 1, 1), Device 0, CC 9.0, Invocations 4"
echo "    Section: Command line profiler metrics"
echo "    gpu__time_duration.sum   us   3.10   3.40   3.20"
exit 0`,
};

// llama-bench's CSV (every field quoted, avg_ts next to last) and llama-batched-bench's JSON lines.
const LLAMA_BENCH = `#!/usr/bin/env bash
echo "llama-bench $*" >>"$CALLS"
echo 'build_commit,n_prompt,n_gen,n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts'
case " $* " in
*" -p 512 "*) echo '"abc","512","0","0","t","1","1","5000.000000","12.000000"' ;;
*) echo '"abc","0","128","128","t","1","1","400.000000","3.000000"' ;;
esac
`;
const BATCHED = `#!/usr/bin/env bash
echo "llama-batched-bench $*" >>"$CALLS"
for x in "8 1000" "32 2000" "64 2500"; do
set -- $x
echo "{\\"n_kv_max\\": 17000, \\"pp\\": 128, \\"tg\\": 128, \\"pl\\": $1, \\"n_kv\\": 1, \\"t_pp\\": 0.1, \\"speed_pp\\": 9.0, \\"t_tg\\": 1.0, \\"speed_tg\\": $2.000000, \\"t\\": 1.1, \\"speed\\": 3.0}"
done
`;

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** A temporary folder, removed after the test. */
function tempRoot(prefix: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  roots.push(root);
  return root;
}

function writeExecutable(file: string, body: string): void {
  writeFileSync(file, body);
  chmodSync(file, 0o755);
}

interface Check {
  readonly status: number | null;
  readonly log: string;
  readonly calls: readonly string[];
  readonly out: string;
}

describe('scripts/gpu-check.sh against stand-in tools', () => {
  function check(env: Record<string, string> = {}, opts: { ifeval?: boolean; peerReady?: boolean } = {}): Check {
    const root = tempRoot('horizon-gpu-check-');
    const repo = path.join(root, 'repo');
    const bin = path.join(root, 'bin');
    const out = path.join(root, 'out');
    for (const d of [path.join(repo, 'scripts'), path.join(repo, 'native'), bin]) mkdirSync(d, { recursive: true });
    for (const s of ['gpu-check.sh', 'gpu-peer.sh']) copyFileSync(path.join(ROOT, 'scripts', s), path.join(repo, 'scripts', s));
    for (const [name, body] of Object.entries(TOOLS)) writeExecutable(path.join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
    const program = path.join(root, 'program.sh');
    writeFileSync(program, PROGRAM);
    if (opts.ifeval) {
      mkdirSync(path.join(root, 'shared', 'ifeval'), { recursive: true });
      writeFileSync(path.join(root, 'shared', 'ifeval', 'input_data.jsonl'), '{"key": 1, "prompt": "x", "instruction_id_list": [], "kwargs": []}\n');
    }
    if (opts.peerReady) {
      // llama.cpp built and the GGUF written by an earlier call on this machine: the preparation ends at once.
      const peerBin = path.join(repo, '.cache', 'peers', 'llama-cuda', 'bin');
      mkdirSync(peerBin, { recursive: true });
      writeExecutable(path.join(peerBin, 'llama-bench'), LLAMA_BENCH);
      writeExecutable(path.join(peerBin, 'llama-batched-bench'), BATCHED);
      writeFileSync(path.join(repo, '.cache', 'peers', 'random-olmoe-q4_0.gguf'), 'GGUF');
    }
    const calls = path.join(root, 'calls.txt');
    writeFileSync(calls, '');
    const r = spawnSync('bash', [path.join(repo, 'scripts', 'gpu-check.sh')], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, OUT: out, CALLS: calls, FAKE_PROGRAM: program, ...env },
    });
    const logFile = path.join(out, 'gpu-check.log');
    return {
      status: r.status,
      log: existsSync(logFile) ? readFileSync(logFile, 'utf8') : `${r.stdout}${r.stderr}`,
      calls: readFileSync(calls, 'utf8').split('\n').filter(Boolean),
      out,
    };
  }

  it('builds, tests, benchmarks and runs the sanitizers in that order, and passes', () => {
    const c = check({}, { ifeval: true });
    expect(c.status, c.log).toBe(0);
    const order = ['built in', 'ctest -L gpu exit code 0', 'benchmark exit code 0', 'compute-sanitizer memcheck over test-gpu-ops: exit code 0'];
    const at = order.map((line) => c.log.indexOf(line));
    expect(at.every((i) => i >= 0), c.log).toBe(true);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
    expect(c.log).toContain('CUDA architectures: 90-real');
    // The device's architecture only, and only the programs the check runs.
    const configure = c.calls.find((l) => l.startsWith('cmake -S native'))!;
    expect(configure).toContain('-DCMAKE_CUDA_ARCHITECTURES=90-real');
    expect(c.calls.find((l) => l.startsWith('cmake --build'))).toMatch(/--target test-gpu-ops test-gpu-model bench-gpu peer-gguf$/);
    expect(c.calls.filter((l) => l.startsWith('compute-sanitizer')).map((l) => l.split(' ')[2])).toEqual(['memcheck', 'racecheck', 'synccheck', 'initcheck']);
    // The benchmark gets the partial budget, the JSON path under $OUT, IFEval's prompts from ../shared and a deadline.
    const bench = c.calls.find((l) => l.startsWith('bench-gpu --partial-slots'))!;
    expect(bench).toMatch(new RegExp(`--partial-slots 16 --json ${c.out}/gpu-check.json --ifeval \\.\\./shared/ifeval/input_data\\.jsonl --ifeval-max-s 120 --deadline-s \\d+$`));
    expect(JSON.parse(readFileSync(path.join(c.out, 'gpu-check.json'), 'utf8'))).toEqual({ residency: 'full', b1: 500 });
    // Nsight Compute's per-kernel lines, stripped of their arguments.
    expect(readFileSync(path.join(c.out, 'gpu-kernels.txt'), 'utf8')).toBe(' attention_kernel (128, 1, 1)x(256, 1, 1), Invocations 4\t us 3.10 3.40 3.20\n');
    // No llama.cpp source beside this copy: the peer's background preparation stops and says so, and fails nothing.
    expect(c.log).toContain("the peer's preparation stopped short");
    expect(c.log).toMatch(/gpu-check: total \d+ s\n$/);
  });

  it("runs the peer's comparison after the benchmark when the peer is ready, its figures under \"peer\" in gpu-check.json", () => {
    const c = check({}, { peerReady: true });
    expect(c.status, c.log).toBe(0);
    expect(c.log).toMatch(/peer prepared at \d+ s: the comparison \(ours above, the peer, ours again\)/);
    // The check's benchmark, the peer's three runs, our second run, then the sanitizers.
    const runs = c.calls.filter((l) => /^(bench-gpu|llama-|compute-sanitizer)/.test(l)).map((l) => l.split(' ')[0]);
    expect(runs.slice(0, 5)).toEqual(['bench-gpu', 'llama-bench', 'llama-bench', 'llama-batched-bench', 'bench-gpu']);
    expect(runs.slice(5)).toEqual(Array(4).fill('compute-sanitizer'));
    // The stand-in bench gives b1 500 tok/s and no prefill or batched figures: those ratios are null.
    const json = JSON.parse(readFileSync(path.join(c.out, 'gpu-check.json'), 'utf8')) as { residency: string; peer: { ratios: Record<string, number | null> } };
    expect(json.residency).toBe('full');
    expect(json.peer.ratios).toEqual({ prefill_512: null, decode_b1: 1.25, decode_b8: null, decode_b32: null, decode_b64: null });
  });

  it('says so and skips the IFEval-shaped workload without input_data.jsonl', () => {
    const c = check({ GPU_CHECK_PEER: '0' });
    expect(c.status, c.log).toBe(0);
    expect(c.log).toContain('no input_data.jsonl: the IFEval-shaped workload is skipped');
    expect(c.calls.find((l) => l.startsWith('bench-gpu --partial-slots'))).not.toContain('--ifeval');
    expect(c.log).not.toContain('peer');
  });

  it('fails when the GPU tests were skipped for want of a device, though ctest passed', () => {
    const c = check({ GPU_CHECK_PEER: '0', FAKE_CTEST_SKIP: 'driver too old' });
    expect(c.status).not.toBe(0);
    expect(c.log).toContain('the gpu tests were skipped: SKIP: no CUDA device (driver too old)');
  });

  it('fails on a sanitizer that reports errors, but not on initcheck, which only informs', () => {
    const racy = check({ GPU_CHECK_PEER: '0', FAKE_SANITIZER_ERRORS: 'racecheck' });
    expect(racy.status).not.toBe(0);
    expect(racy.log).toContain('compute-sanitizer racecheck over test-gpu-ops: exit code 9 (errors reported; see the log)');
    const uninit = check({ GPU_CHECK_PEER: '0', FAKE_SANITIZER_ERRORS: 'initcheck' });
    expect(uninit.status, uninit.log).toBe(0);
    expect(uninit.log).toContain('compute-sanitizer initcheck over test-gpu-ops (informational): exit code 9 (uninitialised reads reported; see the log)');
  });

  it('stops with exit code 3 when the build fails, before any test or benchmark', () => {
    const c = check({ GPU_CHECK_PEER: '0', FAKE_BUILD_FAILS: '1' });
    expect(c.status).toBe(3);
    expect(c.log).toContain('build failed');
    expect(c.calls.some((l) => l.startsWith('ctest') || l.startsWith('bench-gpu'))).toBe(false);
  });

  it('runs only the peer comparison in GPU_CHECK_MODE=peer, and passes on its exit code', () => {
    const c = check({ GPU_CHECK_MODE: 'peer' });
    // No llama.cpp source beside this copy nor carried in .cache: the peer script says so and exits 2.
    expect(c.status).toBe(2);
    expect(c.log).toMatch(/peer run exit code 2; total \d+ s/);
    expect(readFileSync(path.join(c.out, 'gpu-peer.log'), 'utf8')).toContain('skipped: no llama.cpp source');
    expect(c.calls.some((l) => l.startsWith('ctest') || l.startsWith('compute-sanitizer'))).toBe(false);
  });

  it("keeps ncu's summary whole when it is not in the layout the filter reads", () => {
    const c = check({ GPU_CHECK_MODE: 'checks', FAKE_NCU_OTHER: '1' });
    expect(c.status, c.log).toBe(0);
    expect(c.log).toContain("ncu's summary was not in the layout expected; kept as it printed it");
    expect(readFileSync(path.join(c.out, 'gpu-kernels.txt'), 'utf8')).toBe('==PROF== Disconnected from process 1\nattention_kernel 4 launches 3.2 us\n');
    expect(existsSync(path.join(c.out, 'gpu-kernels.txt.raw'))).toBe(false);
  });

  it('runs only the sanitizers and Nsight Compute in GPU_CHECK_MODE=checks', () => {
    const c = check({ GPU_CHECK_MODE: 'checks' });
    expect(c.status, c.log).toBe(0);
    expect(c.calls.some((l) => l.startsWith('ctest') || l.startsWith('bench-gpu --partial-slots'))).toBe(false);
    expect(c.calls.filter((l) => l.startsWith('compute-sanitizer'))).toHaveLength(4);
    expect(c.calls.some((l) => l.startsWith('ncu'))).toBe(true);
  });
});

describe('scripts/gpu-peer.sh: the comparison from llama.cpp and our benchmark, stand-ins for both', () => {
  // Our bench's JSON as bench-gpu writes it: a run per line, full residency first; each call takes its figures from
  // the next line of $OURS (prefill, b1, b8, b32, b64).
  const OURS_BENCH = `#!/usr/bin/env bash
echo "bench-gpu $*" >>"$CALLS"
n=$(( $(cat "$COUNT" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$COUNT"
read -r p b1 b8 b32 b64 < <(sed -n "\${n}p" "$OURS")
while [ $# -gt 0 ]; do
  if [ "$1" = --json ]; then
    {
      echo '{'
      echo '  "device": "stand-in",'
      echo '  "runs": ['
      echo "    {\\"residency\\": \\"full\\", \\"ok\\": true, \\"prefill_tokens_per_s\\": $p, \\"ttft_128_ms\\": 60, \\"decode_tokens_per_s\\": {\\"b1\\": $b1, \\"b1_no_graph\\": 1, \\"b8_unscreened\\": 2, \\"b8\\": $b8, \\"b32\\": $b32, \\"b64\\": $b64, \\"b256\\": 3}},"
      echo '    {"residency": "partial", "ok": true, "prefill_tokens_per_s": 7, "decode_tokens_per_s": {"b1": 7, "b8": 7, "b32": 7, "b64": 7}}'
      echo '  ]'
      echo '}'
    } >"$2"
  fi
  shift
done
`;
  function compare(ours: string, env: Record<string, string> = {}) {
    const root = tempRoot('horizon-gpu-peer-');
    const repo = path.join(root, 'repo');
    const build = path.join(repo, 'native', 'build-gpu');
    const peerBin = path.join(repo, '.cache', 'peers', 'llama-cuda', 'bin');
    const out = path.join(root, 'out');
    for (const d of [path.join(repo, 'scripts'), build, peerBin, out]) mkdirSync(d, { recursive: true });
    copyFileSync(path.join(ROOT, 'scripts', 'gpu-peer.sh'), path.join(repo, 'scripts', 'gpu-peer.sh'));
    writeExecutable(path.join(build, 'bench-gpu'), OURS_BENCH);
    writeExecutable(path.join(peerBin, 'llama-bench'), LLAMA_BENCH);
    writeExecutable(path.join(peerBin, 'llama-batched-bench'), BATCHED);
    // The GGUF is there: peer-gguf is not run again.
    writeFileSync(path.join(repo, '.cache', 'peers', 'random-olmoe-q4_0.gguf'), 'GGUF');
    writeFileSync(path.join(root, 'ours.txt'), ours);
    const calls = path.join(root, 'calls.txt');
    writeFileSync(calls, '');
    const r = spawnSync('bash', ['scripts/gpu-peer.sh', 'native/build-gpu', '300'], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, OUT: out, CALLS: calls, OURS: path.join(root, 'ours.txt'), COUNT: path.join(root, 'count'), ...env },
    });
    const json = path.join(out, 'gpu-check-peer.json');
    return {
      status: r.status,
      output: `${r.stdout}${r.stderr}`,
      calls: readFileSync(calls, 'utf8').split('\n').filter(Boolean),
      peer: existsSync(json) ? (JSON.parse(readFileSync(json, 'utf8')) as Record<string, Record<string, number | null> | string>) : null,
      out,
    };
  }

  it('alternates ours, the peer, ours, and gives the better of our two runs over the peer', () => {
    const c = compare('2000 600 900 1500 1800\n2100 580 950 1550 1700\n');
    expect(c.status, c.output).toBe(0);
    expect(c.calls.map((l) => l.split(' ')[0])).toEqual(['bench-gpu', 'llama-bench', 'llama-bench', 'llama-batched-bench', 'bench-gpu']);
    expect(c.calls[1]).toContain('-p 512 -n 0');
    expect(c.calls[2]).toContain('-p 0 -n 128 -d 128');
    expect(c.calls[3]).toContain('-npp 128 -ntg 128 -npl 8,32,64');
    expect(c.peer!.ours).toEqual({ prefill_512: 2100, decode_b1: 600, decode_b8: 950, decode_b32: 1550, decode_b64: 1800 });
    expect(c.peer!.peer_figures).toEqual({ prefill_512: 5000, decode_b1: 400, decode_b8: 1000, decode_b32: 2000, decode_b64: 2500 });
    expect(c.peer!.ratios).toEqual({ prefill_512: 0.42, decode_b1: 1.5, decode_b8: 0.95, decode_b32: 0.775, decode_b64: 0.72 });
  });

  // The CUDA simulator's build of bench-gpu (built with nvcc, as in CI), one layer of the small model: the JSON the
  // comparison reads is the real writer's, not the stand-in's.
  const simBench = path.join(ROOT, 'native', 'build', 'sim-bench-gpu');
  it.skipIf(!existsSync(simBench))("reads our figures from the JSON bench-gpu writes (the simulator's build)", () => {
    const first = path.join(tempRoot('horizon-gpu-peer-sim-'), 'bench.json');
    const b = spawnSync(simBench, ['--small', '--quick', '--layers', '1', '--full-only', '--no-kernel-table', '--json', first], { encoding: 'utf8', timeout: 300_000 });
    expect(b.status, b.stderr).toBe(0);
    const real = JSON.parse(readFileSync(first, 'utf8')) as {
      runs: { residency: string; prefill_tokens_per_s: number; decode_tokens_per_s: Record<string, number> }[];
    };
    const full = real.runs.find((r) => r.residency === 'full')!;
    expect(full.decode_tokens_per_s.b1).toBeGreaterThan(0);
    // Our second run gives nothing better, so the figures are the simulator's run's.
    const c = compare('0 0 0 0 0\n', { PEER_OURS_FIRST: first });
    expect(c.status, c.output).toBe(0);
    const ours = c.peer!.ours as Record<string, number>;
    expect(ours.prefill_512).toBeCloseTo(full.prefill_tokens_per_s, 3);
    for (const [key, field] of [['decode_b1', 'b1'], ['decode_b8', 'b8'], ['decode_b32', 'b32'], ['decode_b64', 'b64']] as const) {
      expect(ours[key]).toBeCloseTo(full.decode_tokens_per_s[field]!, 3);
    }
    // Written with three decimals.
    expect((c.peer!.ratios as Record<string, number>).decode_b1).toBeCloseTo(full.decode_tokens_per_s.b1! / 400, 2);
  });

  it("takes gpu-check's own benchmark as our first run", () => {
    const first = path.join(tempRoot('horizon-gpu-peer-first-'), 'gpu-check.json');
    writeFileSync(
      first,
      '{\n  "runs": [\n    {"residency": "full", "prefill_tokens_per_s": 3000, "decode_tokens_per_s": {"b1": 700, "b8": 0, "b32": 1600, "b64": 1900}}\n  ]\n}\n',
    );
    const c = compare('1000 500 800 1400 1500\n', { PEER_OURS_FIRST: first });
    expect(c.status, c.output).toBe(0);
    expect(c.calls.map((l) => l.split(' ')[0])).toEqual(['llama-bench', 'llama-bench', 'llama-batched-bench', 'bench-gpu']);
    expect(c.peer!.ours).toEqual({ prefill_512: 3000, decode_b1: 700, decode_b8: 800, decode_b32: 1600, decode_b64: 1900 });
    expect(c.peer!.ratios).toMatchObject({ prefill_512: 0.6, decode_b1: 1.75, decode_b8: 0.8 });
  });
});
