import {
  ConfigError,
  type GuardrailProfile,
  type GuardrailRule,
  type GuardrailsConfig,
  invalidRequest,
} from '@gw/shared';
import { ConditionError, compileCondition, type RequestMetadata } from './cel-condition.ts';
import type { GuardrailProvider } from './guardrail-types.ts';
import { createBuiltinProvider } from './providers/builtin/builtin-provider.ts';
import { createProvider } from './providers/provider-factory.ts';
import type { ProviderOptions } from './providers/provider-options.ts';
import type { CompiledProfile, CompiledRule } from './rule-runner.ts';

/**
 * A rule or profile that cannot be used; `field` names it as the config file or the API body does. A config
 * error: start-up ends with its one line.
 */
export class GuardrailConfigError extends ConfigError {
  override name = 'GuardrailConfigError';
  readonly field: string;

  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/** Compiles a rule's condition, or throws naming the field (`guardrails.rules[2].condition: …`). */
export function compileRuleCondition(rule: Pick<GuardrailRule, 'condition'>, field: string) {
  try {
    return compileCondition(rule.condition);
  } catch (error) {
    if (error instanceof ConditionError) throw new GuardrailConfigError(`${field}.condition`, error.message);
    throw error;
  }
}

/** Checks what the schema cannot: a built-in profile's JSON schema compiles. Throws naming the field. */
export function checkProfile(profile: GuardrailProfile): void {
  if (profile.type !== 'builtin') return;
  try {
    createBuiltinProvider(profile);
  } catch (error) {
    throw new GuardrailConfigError('json_schema', (error as Error).message);
  }
}

export interface CompileOptions extends ProviderOptions {
  /** The set this one replaces: providers of unchanged profiles are kept (their clients and pools). */
  previous?: GuardrailSet | undefined;
  /** Where config errors are named: `guardrails` for the config file. */
  field?: string;
}

/** The rules and profiles in force, compiled once: conditions parsed and type checked, providers built. */
export class GuardrailSet {
  /** Enabled rules, in order. */
  readonly rules: readonly CompiledRule[];
  private readonly byId: Map<string, CompiledRule>;
  private readonly providers: Map<string, GuardrailProvider>;

  constructor(rules: CompiledRule[], providers: Map<string, GuardrailProvider>) {
    this.rules = rules;
    this.byId = new Map(rules.map((rule) => [rule.config.id, rule]));
    this.providers = providers;
  }

  static readonly EMPTY = new GuardrailSet([], new Map());

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /**
   * The rules that apply to a request: those named by `x-gw-guardrail-id` (whatever their condition; an
   * unknown name is a 400), and those whose condition holds, each kept at its sampling rate. A condition
   * that fails to evaluate (a header it indexes is missing) does not apply, and is reported.
   */
  select(
    metadata: RequestMetadata,
    options: {
      requested?: readonly string[];
      onConditionError?: (rule: string, error: unknown) => void;
    } = {},
  ): CompiledRule[] {
    const { requested } = options;
    if (requested) {
      for (const id of requested) {
        if (!this.byId.has(id))
          throw invalidRequest(`x-gw-guardrail-id: no enabled guardrail rule '${id}'`, 'x-gw-guardrail-id');
      }
    }
    const selected: CompiledRule[] = [];
    for (const rule of this.rules) {
      if (requested?.includes(rule.config.id)) {
        selected.push(rule);
        continue;
      }
      let applies: boolean;
      try {
        applies = rule.condition(metadata);
      } catch (error) {
        options.onConditionError?.(rule.config.id, error);
        applies = false;
      }
      if (!applies) continue;
      const rate = rule.config.sampling_rate;
      if (rate < 1 && Math.random() >= rate) continue;
      selected.push(rule);
    }
    return selected;
  }

  /** Releases the providers the next set does not keep. */
  retire(next: GuardrailSet): void {
    const kept = new Set(next.providers.values());
    for (const provider of this.providers.values()) if (!kept.has(provider)) provider.close?.();
  }

  close(): void {
    this.retire(GuardrailSet.EMPTY);
  }

  /** @internal The provider built for a profile of this exact content, for reuse. */
  providerFor(key: string): GuardrailProvider | undefined {
    return this.providers.get(key);
  }
}

const REMOTE: ReadonlySet<GuardrailProfile['type']> = new Set(['bedrock', 'azure_content_safety', 'webhook']);

/**
 * Compiles profiles and rules. Throws GuardrailConfigError naming the field for a condition that does not
 * compile or a rule naming an unknown profile, so the config file fails start-up and the API answers 400.
 */
export async function compileGuardrails(
  config: GuardrailsConfig,
  options: CompileOptions,
): Promise<GuardrailSet> {
  const field = options.field ?? 'guardrails';
  const providers = new Map<string, GuardrailProvider>();
  const profiles = new Map<string, CompiledProfile | undefined>();
  for (const profile of config.profiles) {
    if (!profile.enabled) {
      profiles.set(profile.id, undefined);
      continue;
    }
    const key = JSON.stringify(profile);
    const provider = options.previous?.providerFor(key) ?? (await createProvider(profile, options));
    providers.set(key, provider);
    profiles.set(profile.id, { id: profile.id, provider, remote: REMOTE.has(profile.type) });
  }
  const rules: CompiledRule[] = [];
  config.rules.forEach((rule, index) => {
    const ruleField = `${field}.rules[${index}]`;
    const condition = compileRuleCondition(rule, ruleField);
    const resolve = (side: 'input_profiles' | 'output_profiles') =>
      rule[side].flatMap((id, position) => {
        if (!profiles.has(id))
          throw new GuardrailConfigError(`${ruleField}.${side}[${position}]`, `names no profile '${id}'`);
        const profile = profiles.get(id);
        return profile ? [profile] : [];
      });
    const compiled = {
      config: rule,
      condition,
      input: resolve('input_profiles'),
      output: resolve('output_profiles'),
    };
    if (rule.enabled) rules.push(compiled);
  });
  return new GuardrailSet(rules, providers);
}
