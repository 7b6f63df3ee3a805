// The process-layer rule: a file's folder says which process it runs in, and this rule fails lint
// when it imports something that process cannot or must not load (see ../shared/STYLE.md, VS Code's code-layering).
// To add a layer: give it a matcher in LAYERS and list what it may import in ALLOWED.
import { builtinModules } from 'node:module';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

/** Ordered: the first matching prefix names the layer of a project file. */
const LAYERS = [
  ['electron/common/', 'common'],
  ['electron/node/', 'node'],
  ['electron/preload/', 'preload'],
  ['electron/main/', 'main'],
  ['electron/worker/', 'worker'],
  ['electron/cli/', 'cli'],
  ['evals/', 'evals'],
  ['renderer/', 'renderer'],
  ['native/', 'native'],
  ['scripts/', 'scripts'],
  ['test/', 'test'],
];

/** Project layers each layer may import, plus what kinds of packages it may load. */
const ALLOWED = {
  common: { layers: ['common'], node: false, electron: false, sqlite: false, native: false },
  node: { layers: ['common', 'node'], node: true, electron: false, sqlite: false, native: false },
  evals: { layers: ['evals'], node: 'evals-node', electron: false, sqlite: false, native: false },
  preload: { layers: ['common'], node: false, electron: true, sqlite: false, native: false },
  main: { layers: ['common', 'node', 'main', 'evals'], node: true, electron: true, sqlite: true, native: false },
  worker: { layers: ['common', 'node', 'worker', 'evals'], node: true, electron: false, sqlite: false, native: 'binding' },
  cli: { layers: ['common', 'node', 'main', 'worker', 'evals', 'cli'], node: true, electron: false, sqlite: true, native: false },
  renderer: { layers: ['common', 'renderer', 'evals-types'], node: false, electron: false, sqlite: false, native: false },
};

const NODE_BUILTINS = new Set(builtinModules);

export function layerOf(file) {
  const rel = path.relative(ROOT, path.resolve(file)).split(path.sep).join('/');
  for (const [prefix, layer] of LAYERS) if (rel.startsWith(prefix)) return { layer, rel };
  return { layer: null, rel };
}

function isNodeBuiltin(spec) {
  return spec.startsWith('node:') || NODE_BUILTINS.has(spec.split('/')[0]);
}

function check(context, node, spec, typeOnly) {
  const filename = context.filename ?? context.getFilename();
  const { layer, rel } = layerOf(filename);
  const rules = layer ? ALLOWED[layer] : undefined;
  if (!rules) return;
  const fail = (what) =>
    context.report({ node, message: `Bad layering: ${layer} (${rel}) may not import ${what}` });

  if (spec.startsWith('.') || spec.startsWith('/')) {
    const target = path.resolve(path.dirname(filename), spec);
    const { layer: targetLayer, rel: targetRel } = layerOf(target);
    if (targetRel.endsWith('.node') || targetRel.startsWith('native/')) {
      if (rules.native === 'binding' && rel === 'electron/worker/runtime/binding.ts') return;
      return fail(`the native addon '${spec}' (only electron/worker/runtime/binding.ts loads it)`);
    }
    if (!targetLayer) return fail(`'${spec}' outside the source layers`);
    if (rules.layers.includes(targetLayer)) return;
    if (targetLayer === 'evals' && rules.layers.includes('evals-types') && typeOnly) return;
    return fail(`'${spec}' from layer ${targetLayer}`);
  }
  if (isNodeBuiltin(spec)) {
    if (rules.node === true) return;
    if (rules.node === 'evals-node' && /(^|\/)node\//.test(rel)) return;
    return fail(`the Node.js module '${spec}'`);
  }
  const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
  if (pkg === 'electron' && !rules.electron) return fail(`'electron'`);
  if (pkg === 'better-sqlite3' && !rules.sqlite) return fail(`'better-sqlite3' (only the main process owns the database)`);
}

export const layeringRule = {
  meta: { type: 'problem', docs: { description: 'process-layer import boundaries' }, schema: [] },
  create(context) {
    return {
      ImportDeclaration(node) {
        const typeOnly =
          node.importKind === 'type' ||
          (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type'));
        check(context, node, String(node.source.value), typeOnly);
      },
      ExportNamedDeclaration(node) {
        if (node.source) check(context, node, String(node.source.value), node.exportKind === 'type');
      },
      ExportAllDeclaration(node) {
        check(context, node, String(node.source.value), node.exportKind === 'type');
      },
      ImportExpression(node) {
        if (node.source.type === 'Literal' && typeof node.source.value === 'string') check(context, node, node.source.value, false);
      },
      CallExpression(node) {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require' && node.arguments[0]?.type === 'Literal') {
          check(context, node, String(node.arguments[0].value), false);
        }
      },
    };
  },
};

export default { rules: { layering: layeringRule } };
