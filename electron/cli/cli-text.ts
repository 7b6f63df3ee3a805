/** How the commands that list runs, campaigns, verdicts and responses write them (`horizon show`, `compare`, `perf`). */

/** A verdict as the listings write it: FAIL stands out among the passes. */
export const verdictWord = (pass: boolean): string => (pass ? 'pass' : 'FAIL');

/** A block of text under its heading, each line indented by two spaces. */
export const indent = (text: string): string => text.split('\n').map((l) => `  ${l}`).join('\n');

/** A run or campaign as the listings name it: its id, and its label (quoted) when it has one. */
export const namedRun = (id: string, label: string | null): string => (label === null ? id : `${id} ${JSON.stringify(label)}`);
