import type { Usage } from '@gw/shared';

/**
 * The prompt-cache parts of a prompt as `prompt_tokens_details` says them, for providers that count cache reads
 * and writes apart from their input tokens (Anthropic, Bedrock): tokens read, written, and of those written the
 * ones kept for an hour; absent when the provider said none of them.
 */
export function promptCacheDetails(counts: {
  read: number | undefined;
  written: number | undefined;
  writtenForAnHour?: number | undefined;
}): Usage['prompt_tokens_details'] {
  const { read, written, writtenForAnHour } = counts;
  if (read === undefined && written === undefined) return undefined;
  return {
    ...(read !== undefined && { cached_tokens: read }),
    ...(written !== undefined && { cache_write_tokens: written }),
    ...(writtenForAnHour !== undefined && { cache_write_1h_tokens: writtenForAnHour }),
  };
}
