import type { ModelAlias } from '@gw/shared';
import type { PlanTarget } from './governance-messages.ts';
import { weightedOrder } from './plan-targets.ts';

/** Compiled patterns, by pattern (bounded: cleared when it outgrows what any configuration needs). */
const compiled = new Map<string, RegExp>();

function matches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  let regex = compiled.get(pattern);
  if (!regex) {
    if (compiled.size >= 10_000) compiled.clear();
    const source = pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    regex = new RegExp(`^${source}$`, 's');
    compiled.set(pattern, regex);
  }
  return regex.test(name);
}

/**
 * The alias a requested target names: an exact name before any pattern, the longest pattern first. A name
 * with a `/` is matched against `<provider>/<model>` (when the request named a provider), one without
 * against the model alone.
 */
function findAlias(requested: PlanTarget, aliases: readonly ModelAlias[]): ModelAlias | undefined {
  const full = requested.provider ? `${requested.provider}/${requested.model}` : requested.model;
  let found: ModelAlias | undefined;
  for (const alias of aliases) {
    const name = alias.name.includes('/') ? full : requested.model;
    if (!matches(alias.name, name)) continue;
    if (!alias.name.includes('*')) return alias;
    if (!found || alias.name.length > found.name.length) found = alias;
  }
  return found;
}

function target(model: string): PlanTarget {
  const slash = model.indexOf('/');
  return { provider: model.slice(0, slash), model: model.slice(slash + 1) };
}

/**
 * The request's targets with each aliased one replaced by the alias's models (docs/governance.md "Model aliases"): the first target's
 * alias picks its first model by weight, every alias's others follow by weight, then its fallbacks. The key's
 * aliases are looked at before the gateway's; a target no alias names stays as it was. Duplicates are left
 * out, first place kept.
 */
export function resolveAliases(
  targets: readonly PlanTarget[],
  aliases: { key?: readonly ModelAlias[] | undefined; gateway: readonly ModelAlias[] },
  random: () => number,
  /** How the first target's alias orders its models (its strategy); weighted without it. */
  order?: (alias: ModelAlias) => ModelAlias['targets'] | undefined,
): PlanTarget[] {
  const resolved: PlanTarget[] = [];
  const seen = new Set<string>();
  const add = (candidate: PlanTarget) => {
    const id = `${candidate.provider}/${candidate.model}`;
    if (seen.has(id)) return;
    seen.add(id);
    resolved.push(candidate);
  };
  for (const [index, requested] of targets.entries()) {
    const alias = (aliases.key && findAlias(requested, aliases.key)) ?? findAlias(requested, aliases.gateway);
    if (!alias) {
      add(requested);
      continue;
    }
    const ordered =
      index === 0
        ? (order?.(alias) ?? weightedOrder(alias.targets, { random }))
        : [...alias.targets].sort((left, right) => right.weight - left.weight);
    for (const choice of ordered) add(target(choice.model));
    for (const fallback of alias.fallbacks) add(target(fallback));
  }
  return resolved;
}
