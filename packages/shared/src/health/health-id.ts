/** What is measured: one key of a provider serving one model (either may be absent: a call without one). */
export interface HealthTarget {
  provider: string;
  key?: string | undefined;
  model?: string | undefined;
}

/**
 * `target` is what is measured: one provider key serving one model. `provider`, `key` and `model` (a provider's
 * model, `provider/model`) are views derived from the targets they are made of.
 */
type TargetKind = 'target' | 'provider' | 'key' | 'model';

/** Separates a target's key from its model: key ids and model names are free text, this is not in them. */
const UNIT = '\u001f';

/**
 * `t:openai#key-1␟gpt-4o` (a target), `p:openai`, `k:openai#key-1`, `m:openai/gpt-4o` (provider names hold
 * neither `#` nor `/`; a target without a key or a model has an empty one).
 */
export const healthId = {
  target: (provider: string, key: string | undefined, model: string | undefined) =>
    `t:${provider}#${key ?? ''}${UNIT}${model ?? ''}`,
  provider: (provider: string) => `p:${provider}`,
  key: (provider: string, key: string) => `k:${provider}#${key}`,
  model: (provider: string, model: string) => `m:${provider}/${model}`,
};

export interface ParsedId {
  kind: TargetKind;
  provider: string;
  name: string;
  key?: string | undefined;
  model?: string | undefined;
}

export function parseId(id: string): ParsedId | undefined {
  const kind = ({ t: 'target', p: 'provider', k: 'key', m: 'model' } as const)[
    id[0] as 't' | 'p' | 'k' | 'm'
  ];
  if (!kind || id[1] !== ':') return undefined;
  const rest = id.slice(2);
  if (kind === 'provider') return { kind, provider: rest, name: rest };
  const at = rest.indexOf(kind === 'model' ? '/' : '#');
  if (at <= 0) return undefined;
  const provider = rest.slice(0, at);
  const name = rest.slice(at + 1);
  if (kind !== 'target') return { kind, provider, name };
  const unit = name.indexOf(UNIT);
  if (unit < 0) return undefined;
  const key = name.slice(0, unit) || undefined;
  const model = name.slice(unit + 1) || undefined;
  return { kind, provider, name: `${key ?? '-'}/${model ?? '-'}`, key, model };
}
