// The ingress route matcher on its own, in process: a realistic mix of request paths matched 1e6 times by the
// route table (exact paths in a Map, patterns bucketed by first segment), alternated with the dispatch it
// replaced (a Map of exact paths, a list of prefixes, then each surface's own string and regex checks), twice
// each. Both find the handler the request runs, or the 404/405 answer. `node bench/route-match.ts`.
import { createLogger, PASSTHROUGH_ROUTES } from '@gw/shared';
// The table's internals, not the package's API: what ingress compiles at start-up, with nothing behind it.
import type { RouteHandler } from '../services/ingress/src/http/route.ts';
import { compileRoutes, wildcardOf } from '../services/ingress/src/http/route-table.ts';
import { buildRoutes, type RouteModuleDependencies } from '../services/ingress/src/routes/index.ts';

const ROUNDS = 1_000_000;

/** [method, path, weight]: mostly chat, then the surfaces, pass-through, health and a path that is not ingress's. */
const MIX: ReadonlyArray<readonly [string, string, number]> = [
  ['POST', '/v1/chat/completions', 50],
  ['POST', '/anthropic/v1/messages', 10],
  ['POST', '/openai/v1/chat/completions', 8],
  ['POST', '/v1/embeddings', 5],
  ['POST', '/genai/v1beta/models/gemini-2.5-pro:generateContent', 5],
  ['GET', '/health', 5],
  ['GET', '/v1/models', 3],
  ['POST', '/genai/v1beta/models/gemini-2.5-pro:streamGenerateContent', 3],
  ['POST', '/bedrock/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse', 3],
  ['POST', '/litellm/v1/chat/completions', 3],
  ['POST', '/v1/responses', 2],
  ['GET', '/v1/files/file-abc123/content', 2],
  ['GET', '/metrics', 1],
  ['GET', '/api/providers', 1],
  ['GET', '/anthropic/v1/messages', 1],
];
const PATHS = MIX.flatMap(([method, path, weight]) =>
  Array.from({ length: weight }, () => ({ method, path })),
);

const dependencies = {
  logger: createLogger({ service: 'bench', level: 'fatal' }),
  bodyLimit: { max_request_body_bytes: 1 },
} as unknown as RouteModuleDependencies;

const noop: RouteHandler = async () => {};
/** What each matcher found besides the handler (the table's `*`, the old surfaces' model and method). */
let wildcard = '';
let operation = '';

/** The new matcher: the table's pattern, then its row for the method. */
function tableMatcher() {
  const match = compileRoutes([
    ...buildRoutes(dependencies),
    // ingress-app.ts's own rows.
    {
      routes: [
        { method: 'GET', path: '/health', handler: noop },
        { method: 'GET', path: '/metrics', handler: noop },
      ],
    },
  ]);
  return (method: string, path: string): unknown => {
    const found = match(path);
    if (!found) return undefined;
    const route = found.routes.get(method);
    if (!route) return found.allow;
    // What ingress-app.ts puts in the request's context.
    wildcard = wildcardOf(found, path);
    return route.handler;
  };
}

const ALLOWED = {
  post: 'POST',
  gp: ['GET', 'POST'],
  gpd: ['GET', 'POST', 'DELETE'],
} as const;

/**
 * The dispatch the table replaced, as main had it: an exact Map and a prefix list in ingress-app.ts, then
 * each surface's handler deciding by its own checks (their bodies, without the I/O).
 */
function prefixMatcher() {
  const openAiOperations: Record<string, RouteHandler> = {
    '/chat/completions': noop,
    '/completions': noop,
    '/embeddings': noop,
    '/responses': noop,
  };
  const genAiPath = /^\/genai\/(v1beta|v1)\/models(?:\/(.*))?$/;
  const genAiBarePath = /^\/genai\/(v1beta|v1)\/()([^/]+\/[^:]+:[A-Za-z]+)$/;
  const bedrockOperations = ['converse', 'converse-stream', 'invoke', 'invoke-with-response-stream'];
  type Dispatch = (method: string, path: string) => unknown;
  const routes: Array<{
    method: string | readonly string[];
    path?: string;
    prefix?: string;
    handler: Dispatch;
  }> = [
    ...['/v1/chat/completions', '/chat/completions', '/v1/text/completions', '/v1/mcp/tool/execute'].map(
      (path) => ({ method: ALLOWED.post, path, handler: () => noop }),
    ),
    { method: 'GET', path: '/health', handler: () => noop },
    { method: 'GET', path: '/metrics', handler: () => noop },
    {
      method: ALLOWED.gpd,
      prefix: '/openai',
      handler: (method, path) => {
        let rest = path.slice('/openai'.length);
        if (rest === '/v1' || rest.startsWith('/v1/') || rest.startsWith('/v1?')) rest = rest.slice(3);
        const bare = rest.split('?')[0]!;
        if (openAiOperations[bare]) return method === 'POST' ? openAiOperations[bare] : 'POST';
        return PASSTHROUGH_ROUTES.find(({ root }) => bare === root || bare.startsWith(`${root}/`));
      },
    },
    {
      method: ALLOWED.gp,
      prefix: '/anthropic',
      handler: (method, path) => {
        const rest = path.slice('/anthropic'.length);
        if (rest === '/v1/messages' || rest === '/v1/messages/count_tokens')
          return method === 'POST' ? noop : 'POST';
        if (rest === '/v1/models' || rest.startsWith('/v1/models/')) return noop;
        return undefined;
      },
    },
    {
      method: ALLOWED.gp,
      prefix: '/genai',
      handler: (method, path) => {
        const match = genAiPath.exec(path) ?? genAiBarePath.exec(path);
        if (!match) return undefined;
        const rest = match[2] || match[3] || '';
        const colon = rest.lastIndexOf(':');
        if (colon === -1) return method === 'GET' ? noop : 'POST';
        if (method !== 'POST') return 'POST';
        wildcard = rest.slice(0, colon);
        operation = rest.slice(colon + 1);
        return noop;
      },
    },
    {
      method: ALLOWED.gpd,
      prefix: '/litellm',
      handler: (method, path) => {
        let rest = path.slice('/litellm'.length);
        if (rest.startsWith('/v1/')) rest = rest.slice(3);
        const operation = rest === '/responses' ? undefined : openAiOperations[rest];
        return operation && (method === 'POST' ? operation : 'POST');
      },
    },
    {
      method: ALLOWED.gp,
      prefix: '/bedrock',
      handler: (method, path) => {
        const match = /^\/bedrock\/model\/(.+)\/([a-z-]+)$/.exec(path);
        if (!match || !bedrockOperations.includes(match[2]!)) return undefined;
        if (method !== 'POST') return 'POST';
        wildcard = match[1]!;
        operation = match[2]!;
        return noop;
      },
    },
    ...PASSTHROUGH_ROUTES.map(({ root }) => ({
      method: ALLOWED.gpd,
      prefix: `/v1${root}`,
      // The served root (`/v1/responses`) decides by its header in both: the same cost.
      handler: (() => noop) satisfies Dispatch,
    })),
  ];
  const exact = new Map(routes.filter((route) => route.path).map((route) => [route.path!, route]));
  const prefixed = routes
    .filter((route) => route.prefix)
    .sort((left, right) => right.prefix!.length - left.prefix!.length);
  return (method: string, path: string): unknown => {
    const route =
      exact.get(path) ??
      prefixed.find((candidate) => path === candidate.prefix || path.startsWith(`${candidate.prefix}/`));
    if (!route) return undefined;
    const allowed =
      typeof route.method === 'string' ? route.method === method : route.method.includes(method);
    return allowed ? route.handler(method, path) : route.method;
  };
}

const CHAT_ONLY = [{ method: 'POST', path: '/v1/chat/completions' }];

function measure(
  name: string,
  matcher: (method: string, path: string) => unknown,
  paths: ReadonlyArray<{ method: string; path: string }>,
): void {
  let found = 0;
  let captured = 0;
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    const { method, path } = paths[round % paths.length]!;
    wildcard = '';
    operation = '';
    if (matcher(method, path) !== undefined) found++;
    captured += wildcard.length + operation.length;
  }
  const elapsed = performance.now() - started;
  const nanoseconds = ((elapsed * 1e6) / ROUNDS).toFixed(1).padStart(6);
  console.log(
    `${name.padEnd(8)} ${nanoseconds} ns/match  (${found} of ${ROUNDS} matched; ${captured} characters captured)`,
  );
}

const matchers = { table: tableMatcher(), prefixes: prefixMatcher() };
for (const [mix, paths] of [
  ['the mix', PATHS],
  ['chat only', CHAT_ONLY],
] as const) {
  console.log(mix);
  for (let pass = 0; pass < 2; pass++) {
    measure('prefixes', matchers.prefixes, paths);
    measure('table', matchers.table, paths);
  }
}
