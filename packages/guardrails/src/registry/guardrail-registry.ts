import {
  GatewayError,
  type GuardrailProfile,
  type GuardrailRule,
  type GuardrailsConfig,
  guardrailProfileSchema,
  guardrailRuleSchema,
  type Logger,
} from '@gw/shared';
import {
  type ChangeFollower,
  type Collection,
  defineCollection,
  followChanges,
  logInvalidDocuments,
  type Store,
} from '@gw/shared/store';
import { z } from 'zod';

/**
 * Where guardrails live in the state store (docs/guardrails.md "Where they live"): one document per profile
 * and per rule, by id, and a channel that tells every ingress to recompile. Rules keep a position, the order
 * they run in (the config file's order, then the order of creation).
 */
const GUARDRAILS_CHANNEL = 'guardrails-changed';

const storedRuleSchema = z.object({ position: z.number(), rule: guardrailRuleSchema });
type StoredRule = z.infer<typeof storedRuleSchema>;

export class GuardrailRegistry {
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly profiles: Collection<GuardrailProfile>;
  private readonly rules: Collection<StoredRule>;

  constructor(options: { store: Store; logger: Logger }) {
    this.store = options.store;
    this.logger = options.logger;
    const invalid = logInvalidDocuments(options.logger);
    this.profiles = defineCollection(options.store, 'guardrail-profiles', guardrailProfileSchema, {
      invalid,
    });
    this.rules = defineCollection(options.store, 'guardrail-rules', storedRuleSchema, { invalid });
  }

  async listProfiles(): Promise<GuardrailProfile[]> {
    return (await this.profiles.values()).sort((left, right) => left.id.localeCompare(right.id));
  }

  async getProfile(id: string): Promise<GuardrailProfile | undefined> {
    return this.profiles.get(id);
  }

  async putProfile(profile: GuardrailProfile): Promise<void> {
    await this.profiles.put(profile.id, profile);
    await this.changed();
  }

  /** True when it existed. A profile a rule still names is refused (409): the rule would check nothing. */
  async deleteProfile(id: string): Promise<boolean> {
    const users = (await this.listRules()).filter(
      (rule) => rule.input_profiles.includes(id) || rule.output_profiles.includes(id),
    );
    if (users.length > 0) {
      throw new GatewayError({
        type: 'conflict',
        message: `guardrail profile '${id}' is used by the rules ${users.map((rule) => `'${rule.id}'`).join(', ')}`,
      });
    }
    const existed = await this.profiles.delete(id);
    if (existed) await this.changed();
    return existed;
  }

  /** The rules in the order they run. */
  async listRules(): Promise<GuardrailRule[]> {
    return (await this.storedRules()).map((stored) => stored.rule);
  }

  async getRule(id: string): Promise<GuardrailRule | undefined> {
    return (await this.storedRules()).find((stored) => stored.rule.id === id)?.rule;
  }

  /** Stores a rule; a new one runs after every existing one, an edited one keeps its place. */
  async putRule(rule: GuardrailRule, position?: number): Promise<void> {
    const stored = await this.storedRules();
    const existing = stored.find((entry) => entry.rule.id === rule.id);
    const place = position ?? existing?.position ?? Math.max(0, ...stored.map((entry) => entry.position + 1));
    await this.rules.put(rule.id, { position: place, rule });
    await this.changed();
  }

  async deleteRule(id: string): Promise<boolean> {
    const existed = await this.rules.delete(id);
    if (existed) await this.changed();
    return existed;
  }

  /** Everything in force, as the config section it amounts to. */
  async read(): Promise<GuardrailsConfig> {
    const [profiles, rules] = await Promise.all([this.listProfiles(), this.listRules()]);
    return { profiles, rules };
  }

  /** Writes the config file's profiles and rules (they win over stored ones of the same id, as for MCP). */
  async seed(config: GuardrailsConfig): Promise<void> {
    if (config.profiles.length === 0 && config.rules.length === 0) return;
    for (const profile of config.profiles) await this.profiles.put(profile.id, profile);
    for (const [position, rule] of config.rules.entries())
      await this.rules.put(rule.id, { position: position - 1_000_000, rule });
    await this.changed();
  }

  /** Follows changes; a notice lost on the way (or a store that lost its data, after `reseed`) resyncs. */
  follow(options: {
    onChange: () => void;
    resync: () => Promise<void>;
    reseed?: () => Promise<void>;
  }): Promise<ChangeFollower> {
    return followChanges({
      store: this.store,
      channel: GUARDRAILS_CHANNEL,
      logger: this.logger,
      onMessage: () => options.onChange(),
      resync: options.resync,
      ...(options.reseed && { reseed: options.reseed }),
    });
  }

  private async storedRules(): Promise<StoredRule[]> {
    return (await this.rules.values()).sort(
      (left, right) => left.position - right.position || left.rule.id.localeCompare(right.rule.id),
    );
  }

  private changed(): Promise<void> {
    return this.store.publish(GUARDRAILS_CHANNEL, 'changed');
  }
}
