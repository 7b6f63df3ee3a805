/** Hosts whose pages a link in the app may open in the system browser (model cards, tokens); nothing else leaves. */
const EXTERNAL_HOSTS: readonly string[] = ['huggingface.co', 'hf.co'];

/** Whether the window may hand `url` to the system browser: https on an allowed host, no credentials in it. */
export function isExternalLinkAllowed(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.protocol === 'https:' && u.username === '' && u.password === '' && u.port === '' && EXTERNAL_HOSTS.includes(u.hostname);
}
