import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..', '..');

/**
 * thread_local declarations whose type may have a destructor. The runtime runs each request on a thread of its own,
 * and such objects' destructors at those threads' exits corrupt the heap in MinGW-w64 builds under Wine (see
 * dense_panels_scratch in native/src/cpu/dense-panels.h): only plain scalars and pointers may be thread_local.
 */
function threadLocalsWithDestructors(source: string): string[] {
  const found: string[] = [];
  for (const line of source.split('\n')) {
    const code = line.replace(/\/\/.*$/, '');
    if (/^\s*(\/\*|\*)/.test(code)) continue; // a block comment's line
    const m = /\bthread_local\s+([^=;{(]+?)\s*(?:[=;{(]|$)/.exec(code);
    if (!m) continue;
    const decl = m[1]!.replace(/\b(static|const|constexpr|inline)\b/g, '').trim();
    const scalar = /^(bool|char|int|unsigned|long|short|float|double|size_t|u?int(8|16|32|64)_t|cudaError_t)\b[^*&<]*\w+$/.test(decl);
    const pointer = /\*\s*\w+$/.test(decl);
    if (!scalar && !pointer) found.push(line.trim());
  }
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(cpp|cc|h|cu|cuh)$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('thread_local in the native runtime', () => {
  it.each([
    ['static thread_local std::vector<float> buf;', true],
    ['  static thread_local std::vector<int32_t> dots_buf; // kept', true],
    ['thread_local block_run b;', true],
    ['thread_local std::string name = "x";', true],
    ['thread_local bool g_programmatic = false;', false],
    ['thread_local int * g_probed_bound = nullptr;', false],
    ['thread_local fiber * g_fiber = nullptr;', false],
    ['thread_local cudaError_t g_last_error = cudaSuccess;', false],
    ['// a comment on thread_local std::vector<float> is no declaration', false],
    [' * nor a block comment line: thread_local objects with destructors', false],
  ])('%s -> flagged %s', (line, flagged) => {
    expect(threadLocalsWithDestructors(line)).toHaveLength(flagged ? 1 : 0);
  });

  it('has none that may have a destructor in native/src or native/addon', () => {
    const found = [...sources(path.join(root, 'native', 'src')), ...sources(path.join(root, 'native', 'addon'))].flatMap((f) =>
      threadLocalsWithDestructors(readFileSync(f, 'utf8')).map((l) => `${path.relative(root, f)}: ${l}`),
    );
    expect(found).toEqual([]);
  });
});
