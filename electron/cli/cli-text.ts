/** How the commands that list verdicts and responses write them (`horizon show`, `horizon compare --key`). */

/** A verdict as the listings write it: FAIL stands out among the passes. */
export const verdictWord = (pass: boolean): string => (pass ? 'pass' : 'FAIL');

/** A block of text under its heading, each line indented by two spaces. */
export const indent = (text: string): string => text.split('\n').map((l) => `  ${l}`).join('\n');
