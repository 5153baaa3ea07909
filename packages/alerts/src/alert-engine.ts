import type { Logger } from '@gw/shared';
import type { AlertDispatcher } from './alert-dispatcher.ts';
import type { AlertLease } from './alert-lease.ts';
import type { AlertRegistry, AlertState } from './alert-registry.ts';
import type { AlertChannel, AlertNotification, AlertRule } from './alert-schemas.ts';
import type { SecretFailure, SecretFailureSource } from './alert-sources.ts';
import { type Observation, type ObservationSources, observe } from './rule-observations.ts';

/** Secret failures kept between two evaluations at most (the oldest go first). */
const MAX_PENDING_FAILURES = 100;

export interface AlertEngineOptions {
  registry: AlertRegistry;
  dispatcher: AlertDispatcher;
  sources: ObservationSources;
  secretFailures?: SecretFailureSource | undefined;
  /** Cluster: a Redis lease; embedded: `localLease`. */
  lease: AlertLease;
  /** Time between evaluations; shorter than the lease's time, so the holder renews it in time. */
  intervalMs: number;
  logger?: Logger | undefined;
  now?: () => number;
}

/**
 * Evaluates every enabled rule each interval, on the replica holding the lease, and turns what it observes into
 * notifications: a subject that starts firing triggers once per cooldown (a burst sends one), one that clears
 * resolves (when its trigger went out), a budget threshold triggers once per budget period. What was sent is
 * remembered in the store, so a replica that takes the lease over does not send it again.
 */
export class AlertEngine {
  private readonly options: AlertEngineOptions;
  private readonly now: () => number;
  private readonly pending: SecretFailure[] = [];
  private readonly unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private holding = false;

  constructor(options: AlertEngineOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.unsubscribe = options.secretFailures?.onSecretFailure((failure) => {
      if (this.pending.length >= MAX_PENDING_FAILURES) this.pending.shift();
      this.pending.push(failure);
    });
  }

  /** Evaluates now and every interval from now on. */
  start(): this {
    this.schedule(0);
    return this;
  }

  /** Whether this replica held the lease at its last evaluation. */
  get leader(): boolean {
    return this.holding;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    await this.running;
    if (this.holding) await this.options.lease.release().catch(() => {});
    this.holding = false;
  }

  /** One evaluation (when this replica holds the lease); answers whether it evaluated. */
  async tick(): Promise<boolean> {
    this.holding = await this.options.lease.hold();
    const failures = this.pending.splice(0);
    if (!this.holding) return false;
    const { registry } = this.options;
    const [rules, channels, states] = await Promise.all([
      registry.listRules(),
      registry.listChannels(),
      registry.listStates(),
    ]);
    const channelsById = new Map(channels.map((channel) => [channel.id, channel]));
    const ruleIds = new Set(rules.map((rule) => rule.id));
    // The state of a deleted rule is forgotten.
    for (const { key } of states)
      if (!ruleIds.has(key.slice(0, key.indexOf('|')))) await registry.deleteState(key);
    const context = { sources: this.options.sources, now: this.now(), secretFailures: failures };
    for (const rule of rules) {
      if (!rule.enabled) continue;
      try {
        const observations = await observe(rule, context);
        const ruleStates = new Map(
          states.filter(({ key }) => key.startsWith(`${rule.id}|`)).map(({ key, state }) => [key, state]),
        );
        const targets = rule.channels
          .map((id) => channelsById.get(id))
          .filter((channel): channel is AlertChannel => channel?.enabled === true);
        await this.apply({ rule, observations, states: ruleStates, channels: targets });
      } catch (error) {
        this.options.logger?.warn({ err: error, rule: rule.id }, 'alert rule not evaluated');
      }
    }
    return true;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .then(() => undefined)
        .catch((error) => {
          this.holding = false;
          this.options.logger?.warn({ err: error }, 'alert evaluation failed');
        })
        .finally(() => {
          this.running = undefined;
          if (this.timer) this.schedule(this.options.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  private async apply(options: {
    rule: AlertRule;
    observations: Observation[];
    states: Map<string, AlertState>;
    channels: AlertChannel[];
  }): Promise<void> {
    const { rule, observations, states, channels } = options;
    const { registry, dispatcher } = this.options;
    const now = this.now();
    const seen = new Set<string>();
    // Several observations of one subject in one evaluation (a burst of events) see each other's effect.
    const write = async (key: string, state: AlertState) => {
      states.set(key, state);
      await registry.writeState(key, state);
    };
    const send = (action: AlertNotification['action'], observation: Observation, dedupKey: string) =>
      dispatcher.enqueue(
        {
          action,
          rule_id: rule.id,
          kind: rule.kind,
          subject: observation.subject,
          severity: rule.severity,
          summary: `${rule.name ? `${rule.name}: ` : ''}${observation.summary}`,
          dedup_key: dedupKey,
          time: now,
          details: observation.details,
        },
        channels,
      );

    for (const observation of observations) {
      const key = `${rule.id}|${observation.subject}`;
      seen.add(key);
      const state = states.get(key);
      const dedupKey = `gw:${rule.id}:${observation.subject}`;

      if (rule.kind === 'budget_threshold') {
        const sameperiod = state?.period === observation.period;
        const notified = sameperiod ? (state?.threshold ?? 0) : 0;
        if (observation.status !== 'firing' || (observation.threshold ?? 0) <= notified) {
          if (!sameperiod)
            await write(key, {
              firing: false,
              last_sent_at: 0,
              notified: false,
              ...period(observation),
            });
          continue;
        }
        send('trigger', observation, `${dedupKey}:${observation.period}:${observation.threshold}`);
        await write(key, {
          firing: true,
          last_sent_at: now,
          notified: true,
          threshold: observation.threshold ?? 0,
          ...period(observation),
        });
        continue;
      }

      if (observation.status === 'hold') continue;
      const event = rule.kind === 'secret_failure';
      if (observation.status === 'firing') {
        if (state?.firing && !event) continue;
        const cooled = now - (state?.last_sent_at ?? 0) >= rule.cooldown_ms;
        if (cooled) send('trigger', observation, dedupKey);
        await write(key, {
          // An event has no clearing: the next one after the cooldown alerts again.
          firing: !event,
          last_sent_at: cooled ? now : (state?.last_sent_at ?? 0),
          notified: cooled,
        });
        continue;
      }
      if (state?.firing)
        await this.clear({
          rule,
          key,
          state,
          observation,
          send: () => send('resolve', observation, dedupKey),
        });
    }

    // A subject that is no longer observed (a provider removed, no traffic in the window) has cleared.
    if (rule.kind === 'budget_threshold' || rule.kind === 'secret_failure') return;
    for (const [key, state] of states) {
      if (seen.has(key) || !state.firing) continue;
      const subject = key.slice(rule.id.length + 1);
      const observation = {
        subject,
        status: 'clear' as const,
        summary: `${subject}: condition cleared`,
        details: {},
      };
      await this.clear({
        rule,
        key,
        state,
        observation,
        send: () => send('resolve', observation, `gw:${rule.id}:${subject}`),
      });
    }
  }

  private async clear(options: {
    rule: AlertRule;
    key: string;
    state: AlertState;
    observation: Observation;
    send: () => void;
  }): Promise<void> {
    if (options.state.notified && options.rule.notify_resolved) options.send();
    await this.options.registry.writeState(options.key, { ...options.state, firing: false, notified: false });
  }
}

function period(observation: Observation): { period?: string } {
  return observation.period !== undefined ? { period: observation.period } : {};
}
