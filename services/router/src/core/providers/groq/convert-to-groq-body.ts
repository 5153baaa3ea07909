import { invalidRequest, type Message } from '@gw/shared';
import { mapDeveloperToSystem } from '../openai/map-developer-to-system.ts';

/** OpenAI params Groq documents as "not yet supported by any of our models": sending them is an error. */
const UNSUPPORTED_PARAMS = ['logprobs', 'top_logprobs', 'logit_bias'] as const;

/** The OpenAI-format body as Groq takes it. */
export function convertToGroqBody(body: Record<string, unknown>): Record<string, unknown> {
  const n = body['n'];
  if (typeof n === 'number' && n > 1) throw invalidRequest('groq answers only one choice: n must be 1', 'n');
  const converted = { ...body };
  for (const name of UNSUPPORTED_PARAMS) delete converted[name];
  if (Array.isArray(converted['messages'])) {
    converted['messages'] = mapDeveloperToSystem(converted['messages'] as Message[]);
  }
  return converted;
}
