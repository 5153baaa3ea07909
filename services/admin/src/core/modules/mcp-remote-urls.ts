/** How many rounds of percent-decoding are checked: a proxy and the server behind it may each decode once. */
const DECODE_ROUNDS = 3;

/** An escape of an ASCII character: the only ones that can make a `/`, `\` or `.` of a path. */
const ASCII_ESCAPE = /%([0-7][0-9A-Fa-f])/g;

/** Overlong UTF-8 (`%c0%ae` for `.`): never valid, yet decoded to ASCII by some servers. */
const OVERLONG = /%c[01]/i;

/** A URL without user-info, as compared with the allow-listed prefixes. */
function withoutCredentials(url: string): URL {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed;
}

/** One round of decoding as a lenient server does it: each ASCII escape, the rest left as written. */
const decodeAscii = (path: string) =>
  path.replace(ASCII_ESCAPE, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/** A decoded path as a server resolves it: dot segments, `\` as `/` (what WHATWG URL does to a path). */
function served(decoded: string): string {
  // What decoding made of `%`, `?` and `#` stays text of the path, not an escape, a query or a fragment.
  const literal = decoded.replaceAll('%', '%25').replaceAll('?', '%3F').replaceAll('#', '%23');
  return new URL(literal, 'http://path.invalid').pathname;
}

/**
 * Whether an http or sse MCP server's URL is under an allow-listed prefix (`network.mcp_remote_urls`), as its
 * server will read it. The URL as parsed must start with the prefix, and so must its path after each round of
 * percent-decoding: `http://host/mcp/%2e%2e%2fadmin` parses as one segment under `/mcp/`, but a server that
 * decodes `%2f` and `%2e` serves `/admin` (issue 42, defect 2). Encoded characters that stay under the prefix
 * once decoded (`/mcp/a%2fb`) pass; a path still encoded after three rounds is refused rather than guessed at.
 */
export function isUnderPrefix(url: string, prefix: string): boolean {
  const target = withoutCredentials(url);
  const allowed = new URL(prefix);
  if (!target.href.startsWith(allowed.href)) return false;
  let path = target.pathname;
  let allowedPath = allowed.pathname;
  for (let round = 0; round < DECODE_ROUNDS; round += 1) {
    if (OVERLONG.test(path)) return false;
    const next = decodeAscii(path);
    if (next === path) return true;
    path = next;
    allowedPath = decodeAscii(allowedPath);
    if (!served(path).startsWith(served(allowedPath))) return false;
  }
  return decodeAscii(path) === path;
}
