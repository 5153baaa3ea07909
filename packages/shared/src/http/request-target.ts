/**
 * The request target of an HTTP request, checked once before any route sees it (every port, both HTTP
 * versions): only the origin form (`/path?query`) of a plain path is served. Dot segments (also
 * percent-encoded), encoded slashes and backslashes, empty segments (`//`), NUL and control characters are
 * refused, because a path that a proxy, a URL parser or an upstream would rewrite could route a request
 * (and gw's provider key with it) somewhere other than the path gw checked. An encoded slash is part of a
 * name on the compatibility surfaces (the GenAI SDK sends `openai%2Fgpt-4o`, the Bedrock SDK an ARN), so
 * ports allow it, but a dot segment between encoded slashes (`x%2F..%2Fy`) is refused like any other;
 * pass-through paths, forwarded as they are, allow no encoded slash at all (`strict`). A trailing slash is
 * an empty last segment and passes here; no route serves one (`/v1/models/` is no endpoint).
 *
 * Returns what is wrong (for a 400 naming it), or undefined for a target gw serves. One pass over the path.
 */
export function requestTargetProblem(
  method: string | undefined,
  target: string | undefined,
  options: { strict?: boolean } = {},
): string | undefined {
  if (target === undefined || target === '') return 'the request target is empty';
  if (target === '*') return method === 'OPTIONS' ? undefined : 'the asterisk form is only for OPTIONS';
  if (target.charCodeAt(0) !== 0x2f)
    return 'the request target must be a path (origin form), not an absolute URL';
  let segmentStart = 1;
  let dots = 0;
  let other = false;
  for (let index = 1; index <= target.length; index++) {
    const code = index < target.length ? target.charCodeAt(index) : 0x2f;
    if (code === 0x3f || code === 0x23) {
      // `?` or `#`: the path ends here; the query is the route's to read.
      return dotSegment(dots, other) ?? controlCharacter(target, index);
    }
    if (code === 0x2f) {
      const problem = dotSegment(dots, other);
      if (problem) return problem;
      if (index === segmentStart && index < target.length) return 'the path has an empty segment (//)';
      segmentStart = index + 1;
      dots = 0;
      other = false;
      continue;
    }
    if (code < 0x20 || code === 0x7f) return 'the path has a control character';
    if (code === 0x5c) return 'the path has a backslash';
    if (code === 0x2e) {
      dots++;
      continue;
    }
    if (code === 0x25) {
      const escaped = target.slice(index + 1, index + 3).toLowerCase();
      if (escaped === '2e') {
        dots++;
        index += 2;
        continue;
      }
      if (escaped === '2f' || escaped === '5c') {
        if (options.strict) {
          return escaped === '2f'
            ? 'the path has an encoded slash (%2F)'
            : 'the path has an encoded backslash (%5C)';
        }
        // A separator once decoded: what lies on either side must not be a dot segment either.
        const problem = dotSegment(dots, other);
        if (problem) return problem;
        dots = 0;
        other = false;
        index += 2;
        continue;
      }
      if (escaped === '00' || (escaped.length === 2 && parseInt(escaped, 16) < 0x20)) {
        return 'the path has an encoded control character';
      }
    }
    other = true;
  }
  return undefined;
}

/** A segment of only dots (one or two, plain or encoded) is a dot segment; three or more are a name. */
function dotSegment(dots: number, other: boolean): string | undefined {
  return !other && (dots === 1 || dots === 2) ? 'the path has a dot segment (. or ..)' : undefined;
}

/** Control characters in the query string are refused too (they end up in upstream URLs and logs). */
function controlCharacter(target: string, from: number): string | undefined {
  for (let index = from; index < target.length; index++) {
    const code = target.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return 'the query has a control character';
  }
  return undefined;
}
