import type { RoutingScope } from '@gw/shared';
import type { StoredOf } from '../resources.ts';
import { compileRuleExpression, type RuleExpression } from './rule-expression.ts';

export type StoredRoutingRule = StoredOf<'routing-rules'>;

/** A stored rule with its expression compiled. */
export interface CompiledRule {
  rule: StoredRoutingRule;
  expression: RuleExpression;
}

/** Whom a request's rules are looked up by: the key and the owners its admission charges. */
export interface RuleScopes {
  virtualKeyId?: string | undefined;
  teamId?: string | undefined;
  customerId?: string | undefined;
}

/** The most specific scope first (docs/routing.md "Precedence"). */
const SCOPE_ORDER: ReadonlyArray<[Exclude<RoutingScope, 'global'>, keyof RuleScopes]> = [
  ['virtual_key', 'virtualKeyId'],
  ['team', 'teamId'],
  ['customer', 'customerId'],
];

const byPriority = (left: CompiledRule, right: CompiledRule) =>
  left.rule.priority - right.rule.priority || left.rule.created_at.localeCompare(right.rule.created_at);

/**
 * The enabled rules, compiled once per change and grouped by scope, so a request reads only the rules of its
 * key, its team and customer, and the global ones, in order: the most specific scope first, then ascending
 * priority (0 first), then the older rule.
 */
export class RuleSet {
  private source: ReadonlyArray<StoredRoutingRule> | undefined;
  private scoped = new Map<string, CompiledRule[]>();
  private global: CompiledRule[] = [];
  /** Compiled expressions by rule id and version: a change to one rule compiles that rule only. */
  private compiled = new Map<string, { version: string; expression: RuleExpression }>();

  /** The rules a request in these scopes evaluates, in order (rebuilt when the list changed). */
  rulesFor(rules: ReadonlyArray<StoredRoutingRule>, scopes: RuleScopes): CompiledRule[] {
    if (rules !== this.source) this.rebuild(rules);
    if (this.scoped.size === 0) return this.global;
    const ordered: CompiledRule[] = [];
    for (const [scope, field] of SCOPE_ORDER) {
      const id = scopes[field];
      if (id !== undefined) ordered.push(...(this.scoped.get(`${scope}:${id}`) ?? []));
    }
    return ordered.length === 0 ? this.global : [...ordered, ...this.global];
  }

  get size(): number {
    return this.source?.length ?? 0;
  }

  private rebuild(rules: ReadonlyArray<StoredRoutingRule>): void {
    const compiled = new Map<string, { version: string; expression: RuleExpression }>();
    const scoped = new Map<string, CompiledRule[]>();
    const global: CompiledRule[] = [];
    for (const rule of rules) {
      if (!rule.enabled) continue;
      const previous = this.compiled.get(rule.id);
      const version = `${rule.updated_at}\u001f${rule.cel_expression}`;
      // Stored rules compiled when written; one that no longer does (a store edited by hand) is left out.
      let expression = previous?.version === version ? previous.expression : undefined;
      try {
        expression ??= compileRuleExpression(rule.cel_expression);
      } catch {
        continue;
      }
      compiled.set(rule.id, { version, expression });
      const entry = { rule, expression };
      if (rule.scope === 'global') global.push(entry);
      else {
        const key = `${rule.scope}:${rule.scope_id}`;
        const list = scoped.get(key);
        if (list) list.push(entry);
        else scoped.set(key, [entry]);
      }
    }
    for (const list of scoped.values()) list.sort(byPriority);
    global.sort(byPriority);
    this.source = rules;
    this.compiled = compiled;
    this.scoped = scoped;
    this.global = global;
  }
}
