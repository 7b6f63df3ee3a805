/** The trained Punkt model: NLTK's PunktParameters, read from the plain-text files in shared/nltk/punkt_english. */
export type PunktParameters = {
  /** Abbreviation types, lower case, without their final period. */
  readonly abbrevTypes: ReadonlySet<string>;
  /** Collocations as `type1 + "\t" + type2`. */
  readonly collocations: ReadonlySet<string>;
  /** Frequent sentence starters, lower case. */
  readonly sentStarters: ReadonlySet<string>;
  /** Orthographic context flags by word type (NLTK's `_ORTHO_*` bits); a missing type means 0. */
  readonly orthoContext: ReadonlyMap<string, number>;
};

/** The four parameter files' contents. */
export type PunktParameterFiles = {
  readonly abbrevTypes: string;
  readonly collocations: string;
  readonly sentStarters: string;
  readonly orthoContext: string;
};

// Lines are kept verbatim (no trimming): the English model has an abbreviation type ". . " with spaces.
function lines(text: string): string[] {
  const out = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out;
}

/** Parses the plain-text Punkt parameters (errors name the file and line). */
export function parsePunktParameters(files: PunktParameterFiles): PunktParameters {
  const collocations = new Set<string>();
  for (const [i, line] of lines(files.collocations).entries()) {
    const parts = line.split('\t');
    if (parts.length !== 2) throw new Error(`collocations.tab line ${i + 1}: expected "type1<TAB>type2", got ${JSON.stringify(line)}`);
    collocations.add(line);
  }
  const orthoContext = new Map<string, number>();
  for (const [i, line] of lines(files.orthoContext).entries()) {
    const tab = line.lastIndexOf('\t');
    const flags = Number(line.slice(tab + 1));
    if (tab < 0 || !Number.isInteger(flags) || flags < 0) {
      throw new Error(`ortho_context.tab line ${i + 1}: expected "word<TAB>flags", got ${JSON.stringify(line)}`);
    }
    orthoContext.set(line.slice(0, tab), flags);
  }
  return {
    abbrevTypes: new Set(lines(files.abbrevTypes)),
    collocations,
    sentStarters: new Set(lines(files.sentStarters)),
    orthoContext,
  };
}
