import { joinUrl, type PassthroughDescriptor } from '../passthrough-descriptor.ts';

/** Anthropic's models list and its own token counter, with its key header and a default API version. */
export const anthropicPassthrough: PassthroughDescriptor = {
  operations: ['models', 'count_tokens'],
  url: ({ baseUrl, path, operation }) =>
    joinUrl(
      baseUrl,
      operation === 'count_tokens'
        ? `/v1/messages/count_tokens${path.slice('/count-tokens'.length)}`
        : `/v1${path}`,
    ),
  auth: (key): Record<string, string> => (key?.value ? { 'x-api-key': key.value } : {}),
  defaults: { 'anthropic-version': '2023-06-01' },
};
