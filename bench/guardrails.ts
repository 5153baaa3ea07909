// Microbenchmark of a built-in guardrail profile alone (its budget: a built-in regex/PII
// profile on input costs <= 0.2 ms for a 4 KB prompt): the rule selection and the input check of one request, in this process, with
// no HTTP around it. `pnpm bench:guardrails`; BENCH_ITERATIONS (20000) and BENCH_WARMUP (2000) tune it.
import { GuardrailSession, type RequestMetadata } from '@gw/guardrails';
import { GuardrailRuntime } from '@gw/guardrails/registry';
import { guardrailsConfigSchema, silentLogger } from '@gw/shared';
import { PROMPT_4K } from './prompt-4k.ts';

const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 20_000);
const warmup = Number(process.env['BENCH_WARMUP'] ?? 2_000);

const PROFILES = {
  pii: { id: 'pii', type: 'builtin', pii: ['email', 'phone', 'card', 'iban', 'secret'] },
  regex: {
    id: 'regex',
    type: 'builtin',
    patterns: [
      { name: 'ticket', regex: 'TKT-\\d{4,}', redact: true },
      { name: 'codename', regex: 'project (?:falcon|osprey)', ignore_case: true },
    ],
    keywords: ['forbidden plan', 'internal only', 'do not share'],
  },
} as const;

const metadata: RequestMetadata = {
  request_type: 'chat',
  model: 'gpt-4o-mini',
  provider: 'openai',
  headers: { 'content-type': 'application/json' },
  virtual_key: 'bench',
  virtual_key_id: 'vk-bench',
  team: '',
  customer: '',
  user: '',
  mcp_client: '',
  tool: '',
  arguments: {},
};

async function measure(name: string, profiles: Array<Record<string, unknown>>, action: 'BLOCK' | 'REDACT') {
  const config = guardrailsConfigSchema.parse({
    profiles,
    rules: [
      {
        id: 'bench',
        condition: 'virtual_key == "bench" && model.startsWith("gpt-4o")',
        action,
        input_profiles: profiles.map((profile) => profile['id']),
      },
    ],
  });
  const runtime = await GuardrailRuntime.start({ config, logger: silentLogger(), environment: {} });
  const input = { texts: [PROMPT_4K], locations: ['messages[0].content'] };
  const signal = new AbortController().signal;
  const once = async () => {
    const rules = runtime.current.select(metadata);
    const session = new GuardrailSession(rules, { metadata, signal });
    try {
      await session.input(input);
    } catch {
      // A BLOCK rule finds the prompt's values and blocks: the check is what is measured.
    }
  };
  for (let index = 0; index < warmup; index++) await once();
  const samples = new Float64Array(iterations);
  for (let index = 0; index < iterations; index++) {
    const started = performance.now();
    await once();
    samples[index] = performance.now() - started;
  }
  samples.sort();
  const at = (quantile: number) =>
    samples[Math.min(samples.length - 1, Math.floor(quantile * samples.length))]!;
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  console.log(
    `${name.padEnd(22)} p50 ${at(0.5).toFixed(4)} ms   p99 ${at(0.99).toFixed(4)} ms   mean ${mean.toFixed(4)} ms`,
  );
  await runtime.close();
}

console.log(`built-in guardrail on a ${PROMPT_4K.length}-character prompt, ${iterations} checks each:`);
await measure('pii (redact)', [PROFILES.pii], 'REDACT');
await measure('pii (block)', [PROFILES.pii], 'BLOCK');
await measure('regex + keywords', [PROFILES.regex], 'BLOCK');
await measure('pii + regex + keywords', [PROFILES.pii, PROFILES.regex], 'REDACT');
