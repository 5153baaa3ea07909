import { invalidRequest } from '@gw/shared';

/**
 * OpenAI's `reasoning_effort` as a thinking budget in tokens, for providers that take a budget instead
 * (Anthropic's `thinking.budget_tokens`, Gemini's `thinkingConfig.thinkingBudget`): `none` and `minimal`
 * think not at all (0), then 1,024, 2,048 and 4,096 tokens. Undefined when the request names no effort.
 */
export function reasoningBudget(params: Record<string, unknown>): number | undefined {
  const effort = params['reasoning_effort'];
  if (effort === undefined || effort === null) return undefined;
  switch (effort) {
    case 'none':
    case 'minimal':
      return 0;
    case 'low':
      return 1024;
    case 'medium':
      return 2048;
    case 'high':
      return 4096;
    default:
      throw invalidRequest(
        `reasoning_effort: '${String(effort)}' is not one of none, minimal, low, medium, high`,
        'reasoning_effort',
      );
  }
}
