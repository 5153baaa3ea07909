import { invalidRequest } from '@gw/shared';
import type { Target } from '../../request/parse-request.ts';

const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

/**
 * The target of a model named in a surface's own way: `<provider>/<model>` names its provider (so an
 * Anthropic-shaped request can be answered by OpenAI), anything else is a model of the surface's own
 * provider (`claude-…` → anthropic on the Anthropic surface). A prefix that cannot be a provider name (an
 * ARN) leaves the whole string as the model; a model id that itself holds a slash needs its provider in
 * front (`groq/meta-llama/llama-4`).
 */
export function surfaceTarget(
  model: string,
  defaultProvider: string,
  options: { field?: string; aliases?: Readonly<Record<string, string>> } = {},
): Target {
  const field = options.field ?? 'model';
  if (!model) throw invalidRequest(`${field}: is required`, field);
  const slash = model.indexOf('/');
  if (slash > 0 && slash < model.length - 1) {
    const prefix = model.slice(0, slash);
    if (PROVIDER_NAME.test(prefix)) {
      return { provider: options.aliases?.[prefix] ?? prefix, model: model.slice(slash + 1) };
    }
  }
  return { provider: defaultProvider, model };
}
