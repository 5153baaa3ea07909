import type { Route, RouteGroup } from './route.ts';

/**
 * What a path matched: one pattern of the table with every row declared on it. `routes` empty: a path below a
 * group's prefix that no row declares (404 in the group's shape).
 */
export interface RouteMatch {
  /** The pattern (the request's metric label and log `route`): bounded, never the raw path. */
  pattern: string;
  group: RouteGroup;
  /** The row of each method the pattern takes. */
  routes: ReadonlyMap<string, Route>;
  /** Those methods, in the order declared: the 405's message. */
  allowed: readonly string[];
  /** The same as an `Allow` header. */
  allow: string;
  /** The pattern before and after its `*`; `wildcard` false: an exact path (all of it is `before`). */
  before: string;
  after: string;
  wildcard: boolean;
}

interface Segment {
  /** Patterns with a `*` whose first segment is this one, the most specific first. */
  patterns: RouteMatch[];
  /** The group owning this segment's paths (its 404), if any. */
  owner?: RouteMatch;
}

function firstSegment(path: string): string {
  const slash = path.indexOf('/', 1);
  return slash === -1 ? path : path.slice(0, slash);
}

function refuse(message: string): never {
  throw new Error(`route table: ${message}`);
}

function entry(group: RouteGroup, pattern: string, star: number): RouteMatch {
  const wildcard = star !== -1;
  return {
    pattern,
    group,
    routes: new Map(),
    allowed: [],
    allow: '',
    before: wildcard ? pattern.slice(0, star) : pattern,
    after: wildcard ? pattern.slice(star + 1) : '',
    wildcard,
  };
}

/**
 * Compiles the route table into the matcher of the hot path: exact paths in one Map; patterns with a `*`
 * bucketed by their first segment, the longest literal head first (then the longest tail), so a path meets
 * only the few patterns of its own surface. Refused: a pattern and method declared twice, a pattern of two
 * groups, a `*` in a first segment, a group prefix of more than one segment, a row outside its group's prefix.
 */
export function compileRoutes(groups: readonly RouteGroup[]): (path: string) => RouteMatch | undefined {
  const exact = new Map<string, RouteMatch>();
  const segments = new Map<string, Segment>();
  const byPattern = new Map<string, RouteMatch>();

  const segmentOf = (name: string): Segment => {
    let segment = segments.get(name);
    if (!segment) {
      segment = { patterns: [] };
      segments.set(name, segment);
    }
    return segment;
  };

  for (const group of groups) {
    if (group.prefix !== undefined) {
      if (firstSegment(group.prefix) !== group.prefix)
        refuse(`group prefix '${group.prefix}' is not one segment`);
      const segment = segmentOf(group.prefix);
      if (segment.owner) refuse(`two groups own '${group.prefix}'`);
      // Matches nothing by itself: found when no row of the segment does.
      segment.owner = { ...entry(group, `${group.prefix}/*`, -1), before: group.prefix };
    }
    for (const route of group.routes) {
      let match = byPattern.get(route.path);
      if (!match) {
        const star = route.path.indexOf('*');
        if (star !== -1 && route.path.indexOf('*', star + 1) !== -1) refuse(`'${route.path}' has two '*'`);
        if (star !== -1 && star < firstSegment(route.path).length)
          refuse(`'${route.path}' has '*' in its first segment`);
        if (group.prefix !== undefined && !route.path.startsWith(`${group.prefix}/`))
          refuse(`'${route.path}' is outside its group's prefix '${group.prefix}'`);
        match = entry(group, route.path, star);
        byPattern.set(route.path, match);
        if (match.wildcard) segmentOf(firstSegment(route.path)).patterns.push(match);
        else exact.set(route.path, match);
      } else if (match.group !== group) refuse(`'${route.path}' is declared by two groups`);
      const routes = match.routes as Map<string, Route>;
      for (const method of typeof route.method === 'string' ? [route.method] : route.method) {
        if (routes.has(method)) refuse(`${method} ${route.path} is declared twice`);
        routes.set(method, route);
      }
      match.allowed = [...routes.keys()];
      match.allow = match.allowed.join(', ');
    }
  }
  for (const segment of segments.values()) {
    segment.patterns.sort(
      (left, right) => right.before.length - left.before.length || right.after.length - left.after.length,
    );
  }

  return (path) => {
    const found = exact.get(path);
    if (found) return found;
    const segment = segments.get(firstSegment(path));
    if (!segment) return undefined;
    for (const candidate of segment.patterns) {
      const { before, after } = candidate;
      if (path.length > before.length + after.length && path.startsWith(before) && path.endsWith(after))
        return candidate;
    }
    return segment.owner;
  };
}

/** What the `*` of the pattern matched in `path` (the path it matched); '' for an exact path. */
export function wildcardOf(match: RouteMatch, path: string): string {
  return match.wildcard ? path.slice(match.before.length, path.length - match.after.length) : '';
}
