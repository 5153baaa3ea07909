import { SseParser, type Usage } from '@gw/shared';

/** JSON answers larger than this are relayed without looking for usage (they are files, not completions). */
const JSON_SNIFF_LIMIT = 1024 * 1024;

/** `usage` in OpenAI's chat/completions/embeddings shape or the Responses API's; undefined otherwise. */
function usageOf(value: unknown): Usage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const usage = (record['usage'] ?? (record['response'] as Record<string, unknown> | undefined)?.['usage']) as
    | Record<string, unknown>
    | undefined;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const number = (name: string) => (typeof usage[name] === 'number' ? (usage[name] as number) : undefined);
  const prompt = number('prompt_tokens') ?? number('input_tokens') ?? 0;
  const completion = number('completion_tokens') ?? number('output_tokens') ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: number('total_tokens') ?? prompt + completion,
  };
}

/**
 * Watches the bytes of a pass-through answer go by and finds the usage it reports, so that budgets and token
 * limits are charged: a JSON answer is parsed once it ended (when small), a stream event by event. Compressed
 * and binary answers report nothing.
 */
export function createUsageSniffer(headers: Record<string, string | string[]>) {
  const type = String(headers['content-type'] ?? '').toLowerCase();
  const encoded = headers['content-encoding'] !== undefined && headers['content-encoding'] !== 'identity';
  let usage: Usage | undefined;
  if (encoded) return { push: (_chunk: Uint8Array) => {}, usage: () => usage };
  if (type.startsWith('text/event-stream')) {
    const parser = new SseParser();
    return {
      push(chunk: Uint8Array) {
        for (const event of parser.push(chunk)) {
          if (!event.data.includes('"usage"')) continue;
          try {
            usage = usageOf(JSON.parse(event.data)) ?? usage;
          } catch {}
        }
      },
      usage: () => usage,
    };
  }
  if (type.startsWith('application/json')) {
    const chunks: Buffer[] = [];
    let size = 0;
    return {
      push(chunk: Uint8Array) {
        size += chunk.byteLength;
        if (size <= JSON_SNIFF_LIMIT) chunks.push(Buffer.from(chunk));
        else chunks.length = 0;
      },
      usage() {
        if (size > JSON_SNIFF_LIMIT || chunks.length === 0) return undefined;
        try {
          return usageOf(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          return undefined;
        }
      },
    };
  }
  return { push: (_chunk: Uint8Array) => {}, usage: () => usage };
}
