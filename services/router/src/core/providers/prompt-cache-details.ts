import type { Usage } from '@gw/shared';

/**
 * The prompt-cache parts of a prompt as `prompt_tokens_details` says them, for providers that count cache reads
 * and writes apart from their input tokens (Anthropic, Bedrock): absent when the provider said neither.
 */
export function promptCacheDetails(
  read: number | undefined,
  write: number | undefined,
): Usage['prompt_tokens_details'] {
  if (read === undefined && write === undefined) return undefined;
  return {
    ...(read !== undefined && { cached_tokens: read }),
    ...(write !== undefined && { cache_write_tokens: write }),
  };
}
