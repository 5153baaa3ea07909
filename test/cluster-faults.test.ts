// A cluster that stays correct when a part stalls: under a steady load of budgeted requests, a router replica
// and then a governance replica are frozen (SIGSTOP, as a GC pause or a partitioned pod looks from outside)
// and thawed. Only the requests that were on the frozen replica may fail, none waits more than a few
// seconds, later requests are served by the other replica, and what was charged is exactly what was served.
import {
  type FakeOpenAi,
  type LaunchedCluster,
  listenerPid,
  scaled,
  startCluster,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './support/http.ts';
import { charged, steadyLoad } from './support/steady-load.ts';

const ADMIN = { authorization: 'Bearer faults-admin' };
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
/** The fake answers 18 tokens; at $1,000 per million tokens a request costs $0.018. */
const COST = 0.018;
/**
 * The prompt of a call the frozen router cut short on thaw (its caller gone), as admission estimates it: 3
 * tokens priming the reply, 4 framing the message, 1 for its two characters.
 */
const PROMPT_COST = (3 + 4 + 1) * 0.001;

/**
 * Each admission: `local` (the default: the ingress admits and settles against Redis itself, so a frozen
 * governance replica costs requests nothing) and `remote` (GW_GOVERNANCE_ADMISSION=remote: every governed
 * request calls a governance replica, which the freeze then stalls).
 */
const ADMISSIONS = [
  { admission: 'local', services: ['router', 'governance'] },
  { admission: 'remote', services: ['governance'] },
] as const;

describe.each(ADMISSIONS)(
  'a frozen replica under a steady load (cluster: 2 routers, 2 governance, $admission admission)',
  ({ admission, services }) => {
    let fake: FakeOpenAi;
    let cluster: LaunchedCluster;

    beforeAll(async () => {
      fake = await startFakeOpenAi();
      cluster = await startCluster({
        adminToken: 'faults-admin',
        env: { GW_GOVERNANCE_ADMISSION: admission },
        replicas: { router: 2, governance: 2 },
        config: {
          providers: {
            openai: {
              keys: [{ value: 'sk-upstream' }],
              network_config: { base_url: fake.url, max_retries: 0 },
            },
          },
          governance: {
            pricing: { 'gpt-4o-mini': { input: 1000, output: 1000 } },
            // The calls a frozen router took are charged by the sweeper, from what the router reported of them.
            settings: { settle_deadline_ms: 8_000, sweep_interval_ms: 250 },
          },
        },
      });
    }, scaled(60_000));
    afterAll(async () => {
      await cluster?.close();
      await fake?.close();
    });

    /** Four clients sending requests back to back until `until` resolves. */
    const load = (key: string, until: Promise<unknown>) =>
      steadyLoad(
        () => post(`${cluster.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': key } }),
        until,
      );

    // Drill time: how long the load runs or a fault is held, not a wait for something to happen.
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it.each(services)(
      'a frozen %s costs the requests that were on it at most about a deadline, and charges match',
      { timeout: scaled(60_000) },
      async (service) => {
        const created = await post(
          `${cluster.adminUrl}/api/governance/virtual-keys`,
          {
            name: `under-load-${service}`,
            provider_configs: [{ provider: 'openai' }],
            budgets: [{ max_limit: 1_000, reset_duration: '1d' }],
          },
          { headers: ADMIN },
        );
        expect(created.status).toBe(201);
        const pid = await listenerPid(cluster.ports[service][0]!);
        let frozenAt = 0;
        let thawedAt = 0;
        const script = (async () => {
          await pause(1_500);
          frozenAt = Date.now();
          process.kill(pid, 'SIGSTOP');
          await pause(4_000);
          process.kill(pid, 'SIGCONT');
          thawedAt = Date.now();
          await pause(2_000);
        })();
        const outcomes = await load(created.body.value, script);

        const failed = outcomes.filter((outcome) => outcome.status !== 200);
        const served = outcomes.length - failed.length;
        // Only the requests in flight on the frozen replica may fail (a completion is never sent twice);
        // none waits long, and once the replica is noticed every request is served.
        expect(failed.length).toBeLessThanOrEqual(4);
        for (const { status, error } of failed)
          expect({ status, error }).toEqual({ status: 503, error: 'service_unavailable' });
        expect(Math.max(...outcomes.map((outcome) => outcome.ms))).toBeLessThan(scaled(5_000));
        const later = outcomes.filter((o) => o.startedAt > frozenAt + 2_000 && o.startedAt < thawedAt);
        expect(later.length).toBeGreaterThan(10);
        expect(later.every((outcome) => outcome.status === 200)).toBe(true);
        expect(served).toBeGreaterThan(40);

        // Charged exactly what was served, every settle landed once, on whichever replica answered; a frozen
        // governance replica's refusals charge nothing. The calls a frozen router took are charged by the sweeper
        // from its report once it is thawed: nothing for those it never sent, the prompt for those it cut short,
        // the answer for one it read before it learnt its caller was gone (test/lost-calls.test.ts has them
        // exact), never what admission reserved (264 tokens).
        const lost = service === 'router' ? failed.length : 0;
        const used = () => charged(cluster.adminUrl, created.body.id, ADMIN);
        await waitFor(
          async () => {
            const extra = Math.round(((await used()) - served * COST) * 1e6);
            const cut = Math.round(PROMPT_COST * 1e6);
            const answer = Math.round(COST * 1e6);
            // Some calls answered, some cut short, the rest never sent: a sum of those, none above an answer.
            for (let answered = 0; answered <= lost; answered++) {
              for (let prompts = 0; answered + prompts <= lost; prompts++) {
                if (extra === answered * answer + prompts * cut) return true;
              }
            }
            return false;
          },
          { timeoutMs: 30_000, what: `charges of ${served} served requests and ${lost} lost` },
        );
        console.info(
          `${service} frozen 4 s: ${outcomes.length} requests, ${failed.length} failed (503), ` +
            `slowest ${Math.max(...outcomes.map((outcome) => outcome.ms))} ms, charged ${await used()} for ${served} served`,
        );
      },
    );
  },
);
