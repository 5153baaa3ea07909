// What admission's estimate of a request costs, in process: `estimateOf` (one walk of the parsed messages and
// tool definitions) against the estimate it replaced (the body's bytes ÷ 4, with the same read of max_tokens
// and n), on the bench's one-message request, its 4 KB prompt (`+4k` rows) and a chat with ten tool
// definitions. Nanoseconds per call, the best of five rounds. `node bench/estimate.ts`.

import { estimateOf } from '../services/ingress/src/request/estimate-tokens.ts';
import { type ParsedCompletion, parseChatRequest } from '../services/ingress/src/request/parse-request.ts';
import { PROMPT_4K } from './prompt-4k.ts';

const CALLS = 1_000_000;
const ROUNDS = 5;

const tool = (index: number) => ({
  type: 'function',
  function: {
    name: `lookup_${index}`,
    description: 'Looks up an order by its number and answers its status, items and delivery date.',
    parameters: {
      type: 'object',
      properties: { order: { type: 'string', description: 'The order number, as on the invoice.' } },
      required: ['order'],
    },
  },
});

const requests = {
  '1 message': {
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 16,
  },
  '4 KB prompt': {
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: PROMPT_4K }],
    max_tokens: 16,
  },
  '10 tools': {
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'Where is order 1234?' }],
    tools: Array.from({ length: 10 }, (_, index) => tool(index)),
    max_tokens: 16,
  },
};

/** The estimate before: the body's length read where it was received, the params read as now. */
function byteEstimate(parsed: ParsedCompletion, bodyBytes: number) {
  const max = parsed.params['max_tokens'] ?? parsed.params['max_completion_tokens'];
  const n = parsed.params['n'];
  return {
    promptTokens: Math.ceil(bodyBytes / 4),
    maxCompletionTokens: typeof max === 'number' ? max : undefined,
    ...(typeof n === 'number' && Number.isInteger(n) && n > 1 && { choices: n }),
  };
}

function nanosPerCall(run: () => { promptTokens: number }): number {
  let best = Number.POSITIVE_INFINITY;
  let sink = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let call = 0; call < CALLS; call++) sink += run().promptTokens;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / CALLS);
  }
  if (sink < 0) console.log(sink);
  return best;
}

console.log(
  `estimate of a parsed request, ns per call (best of ${ROUNDS} rounds of ${CALLS.toLocaleString()}):`,
);
for (const [name, body] of Object.entries(requests)) {
  const text = JSON.stringify(body);
  const parsed = parseChatRequest(JSON.parse(text));
  // The body's length came free with the body (the Buffer read).
  const bytes = Buffer.byteLength(text);
  const before = nanosPerCall(() => byteEstimate(parsed, bytes));
  const after = nanosPerCall(() => estimateOf(parsed));
  const tokens = `${byteEstimate(parsed, bytes).promptTokens} → ${estimateOf(parsed).promptTokens} tokens`;
  console.log(
    `  ${name.padEnd(12)} bytes ÷ 4 ${before.toFixed(0).padStart(5)}   estimateOf ${after.toFixed(0).padStart(5)}   (${tokens})`,
  );
}
