import { request } from 'undici';

/** A channel's send that failed: `retryable` for network errors, 429 and 5xx; a 4xx will not get better. */
export class ChannelSendError extends Error {
  override name = 'ChannelSendError';
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(message);
    this.retryable = retryable;
  }
}

/** Most of an answer read back (for the error message): receivers answer a line or two. */
const MAX_ANSWER_BYTES = 2_048;

/** POSTs a JSON body; resolves on 2xx, throws ChannelSendError otherwise. */
export async function postJson(options: {
  url: string;
  body: string;
  headers?: Record<string, string>;
  timeoutMs: number;
}): Promise<void> {
  let answer: Awaited<ReturnType<typeof request>>;
  try {
    answer = await request(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body: options.body,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    throw new ChannelSendError(`could not reach the receiver: ${(error as Error).message}`, true);
  }
  const text = await readSome(answer.body);
  if (answer.statusCode >= 200 && answer.statusCode < 300) return;
  const retryable = answer.statusCode === 429 || answer.statusCode >= 500;
  throw new ChannelSendError(`the receiver answered ${answer.statusCode}: ${text.slice(0, 200)}`, retryable);
}

async function readSome(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_ANSWER_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_ANSWER_BYTES);
}
