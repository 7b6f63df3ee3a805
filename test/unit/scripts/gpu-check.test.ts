/**
 * scripts/gpu-check.sh's control flow, which otherwise runs only on a lent GPU machine with minutes to spare: the
 * script runs here on a copy of the scripts against stand-ins for nvcc, nvidia-smi, cmake, ctest, the built programs,
 * compute-sanitizer and ncu (shell scripts that log how they were called and answer as the flags of a test ask), so a
 * broken branch, an unset variable or a wrong exit code shows up before a GPU session spends its time on it.
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
echo "  attention_kernel(attention_args) (128, 1, 1)x(256, 1, 1), Device 0, CC 9.0, Invocations 4"
echo "    Section: Command line profiler metrics"
echo "    gpu__time_duration.sum   us   3.10   3.40   3.20"
exit 0`,
};

interface Check {
  readonly status: number | null;
  readonly log: string;
  readonly calls: readonly string[];
  readonly out: string;
}

describe('scripts/gpu-check.sh against stand-in tools', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
  });

  function check(env: Record<string, string> = {}, opts: { ifeval?: boolean } = {}): Check {
    const root = mkdtempSync(path.join(os.tmpdir(), 'horizon-gpu-check-'));
    roots.push(root);
    const repo = path.join(root, 'repo');
    const bin = path.join(root, 'bin');
    const out = path.join(root, 'out');
    for (const d of [path.join(repo, 'scripts'), path.join(repo, 'native'), bin]) mkdirSync(d, { recursive: true });
    for (const s of ['gpu-check.sh', 'gpu-peer.sh']) copyFileSync(path.join(ROOT, 'scripts', s), path.join(repo, 'scripts', s));
    for (const [name, body] of Object.entries(TOOLS)) {
      writeFileSync(path.join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
      chmodSync(path.join(bin, name), 0o755);
    }
    const program = path.join(root, 'program.sh');
    writeFileSync(program, PROGRAM);
    if (opts.ifeval) {
      mkdirSync(path.join(root, 'shared', 'ifeval'), { recursive: true });
      writeFileSync(path.join(root, 'shared', 'ifeval', 'input_data.jsonl'), '{"key": 1, "prompt": "x", "instruction_id_list": [], "kwargs": []}\n');
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

  it('runs only the sanitizers and Nsight Compute in GPU_CHECK_MODE=checks', () => {
    const c = check({ GPU_CHECK_MODE: 'checks' });
    expect(c.status, c.log).toBe(0);
    expect(c.calls.some((l) => l.startsWith('ctest') || l.startsWith('bench-gpu --partial-slots'))).toBe(false);
    expect(c.calls.filter((l) => l.startsWith('compute-sanitizer'))).toHaveLength(4);
    expect(c.calls.some((l) => l.startsWith('ncu'))).toBe(true);
  });
});
