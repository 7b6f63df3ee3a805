/**
 * The renderer's Content-Security-Policy, with the origins it may connect to beyond its own. A page enforces every
 * policy it is given, so the servers' headers narrow the static meta tag of renderer/index.html: the Electron window
 * connects nowhere (its calls go over IPC), `horizon serve`'s page only to its own event socket.
 */
export function contentSecurityPolicy(connect: readonly string[] = []): string {
  return (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
    `connect-src ${["'self'", ...connect].join(' ')}; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'`
  );
}

/** The meta tag of renderer/index.html (a test checks): the built page cannot know the port serve will listen on. */
export const RENDERER_META_CSP = contentSecurityPolicy(['ws://127.0.0.1:*', 'ws://localhost:*']);

/** `horizon serve` on `port`: the event socket under either name its Host check accepts. */
export function servePageCsp(port: number): string {
  return contentSecurityPolicy([`ws://127.0.0.1:${port}`, `ws://localhost:${port}`]);
}
