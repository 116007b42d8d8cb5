/**
 * Redirect URIs: compared exactly, except that a loopback redirect (http on 127.0.0.1, [::1] or localhost)
 * matches on any port (RFC 8252 7.3: a native app listens on whatever port it is given). What a client may
 * register at all: https anywhere, http on loopback only, and a native app's private-use scheme
 * (`cursor://…`, `com.example.app:/cb`), never a scheme a browser would run (javascript:, data:, file:).
 */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);
const FORBIDDEN_SCHEMES = new Set([
  "javascript:",
  "data:",
  "file:",
  "vbscript:",
  "blob:",
  "about:",
  "ftp:",
  "ws:",
  "wss:",
]);

export const MAX_REDIRECT_URI_LENGTH = 2000;

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

export const isLoopback = (url: URL) => url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);

/** Why a client may not register this redirect URI, or null when it may. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  const url = parse(uri);
  if (!url) return "is not an absolute URI";
  if (url.hash !== "" || uri.includes("#")) return "must not have a fragment";
  if (url.username !== "" || url.password !== "") return "must not carry credentials";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:")
    return isLoopback(url) ? null : "http is allowed only on loopback (127.0.0.1, [::1], localhost); use https";
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `scheme ${url.protocol} is not allowed`;
  return null;
}

/** Whether `given` is one of the registered URIs: exactly, or a registered loopback URI on another port. */
export function redirectUriMatches(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true;
  const url = parse(given);
  if (!url || !isLoopback(url)) return false;
  return registered.some((candidate) => {
    const known = parse(candidate);
    if (!known || !isLoopback(known)) return false;
    return (
      known.hostname === url.hostname &&
      known.pathname === url.pathname &&
      known.search === url.search &&
      given === withPort(candidate, known, url.port)
    );
  });
}

/** The registered URI's text with another port, so nothing but the port may differ. */
function withPort(text: string, url: URL, port: string): string {
  const authority = `${url.hostname}${url.port ? `:${url.port}` : ""}`;
  const at = text.indexOf(authority);
  if (at < 0) return text;
  return `${text.slice(0, at)}${url.hostname}${port ? `:${port}` : ""}${text.slice(at + authority.length)}`;
}
