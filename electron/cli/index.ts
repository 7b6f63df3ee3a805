/**
 * The `horizon` command line. To add a command: write `commands/<name>.ts` exporting
 * `run(args: string[]): Promise<number>` and a one-line `summary`, then add it to COMMANDS.
 */
export { endQuietlyOnClosedStdout } from './command-args.js';

type CommandModule = { run(args: string[]): Promise<number>; summary: string };

const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  devices: () => import('./commands/devices.js'),
  pack: () => import('./commands/pack.js'),
  logits: () => import('./commands/logits.js'),
  generate: () => import('./commands/generate.js'),
  score: () => import('./commands/score.js'),
  prepare: () => import('./commands/prepare.js'),
  assets: () => import('./commands/assets.js'),
  eval: () => import('./commands/eval.js'),
  verify: () => import('./commands/verify.js'),
  perf: () => import('./commands/perf.js'),
  export: () => import('./commands/export.js'),
  show: () => import('./commands/show.js'),
  delete: () => import('./commands/delete.js'),
  label: () => import('./commands/label.js'),
  import: () => import('./commands/import.js'),
  compare: () => import('./commands/compare.js'),
  quality: () => import('./commands/quality.js'),
  serve: () => import('./commands/serve.js'),
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const lines = await Promise.all(
      Object.entries(COMMANDS).map(async ([cmd, load]) => `  ${cmd.padEnd(10)} ${(await load()).summary}`),
    );
    const usage = `usage: horizon <command> [options]\n\ncommands:\n${lines.join('\n')}`;
    // Asked for, it is the output; without a command it is the error.
    if (name) console.log(usage);
    else console.error(usage);
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    console.error(`horizon: unknown command '${name}' (see 'horizon --help')`);
    return 2;
  }
  try {
    return await (await load()).run(rest);
  } catch (err) {
    console.error(`horizon ${name}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
