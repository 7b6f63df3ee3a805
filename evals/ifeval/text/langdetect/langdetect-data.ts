/** One Python langdetect profile file (`profiles/<lang>`): n-gram counts of a language. */
export type LangProfile = {
  /** Language code, e.g. "en", "zh-cn". */
  readonly name: string;
  /** Occurrences of each 1- to 3-character n-gram. */
  readonly freq: Readonly<Record<string, number>>;
  /** Total n-grams of length 1, 2 and 3. */
  readonly n_words: readonly number[];
};

/** Everything the detector reads from the langdetect package: its messages.properties and its profiles. */
export type LangdetectData = {
  /** Where the data came from (package, version, path). */
  readonly source: string;
  /** utils/messages.properties, keys to decoded values. */
  readonly messages: Readonly<Record<string, string>>;
  /** Profiles in the order the factory loads them (that order is the language index order). */
  readonly profiles: readonly LangProfile[];
};

/** Checks the shape of parsed langdetect data; `label` names the file in errors. */
export function validateLangdetectData(value: unknown, label: string): LangdetectData {
  const fail = (what: string): never => {
    throw new Error(`${label}: ${what}`);
  };
  if (typeof value !== 'object' || value === null) return fail('expected a JSON object');
  const v = value as Record<string, unknown>;
  if (typeof v.source !== 'string') fail('"source" must be a string');
  if (typeof v.messages !== 'object' || v.messages === null) fail('"messages" must be an object');
  if (!Array.isArray(v.profiles) || v.profiles.length < 2) fail('"profiles" must list at least 2 profiles');
  for (const [i, p] of (v.profiles as unknown[]).entries()) validateLangProfile(p, `${label}: profiles[${i}]`);
  return value as LangdetectData;
}

/** Checks one profile's shape (name, freq, n_words of 3 numbers). */
export function validateLangProfile(value: unknown, label: string): LangProfile {
  const p = value as Partial<LangProfile> | null;
  if (typeof p !== 'object' || p === null || typeof p.name !== 'string' || typeof p.freq !== 'object' || p.freq === null) {
    throw new Error(`${label}: expected {name, freq, n_words}`);
  }
  if (!Array.isArray(p.n_words) || p.n_words.length !== 3 || !p.n_words.every((n) => typeof n === 'number')) {
    throw new Error(`${label}: n_words must be 3 numbers`);
  }
  return p as LangProfile;
}
