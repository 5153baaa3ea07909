import { OUTBOUND_REFUSED_CODE } from '@gw/shared';
import { type Dispatcher, request } from 'undici';

/** A channel's send that failed: `retryable` for network errors, 429 and 5xx; a 4xx will not get better. */
export class ChannelSendError extends Error {
  override name = 'ChannelSendError';
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(message);
    this.retryable = retryable;
  }
}

/** Most of an answer read (and dropped) before the connection is let go: receivers answer a line or two. */
const MAX_ANSWER_BYTES = 2_048;

/**
 * POSTs a JSON body; resolves on 2xx, throws ChannelSendError otherwise. The error says the status, never the
 * receiver's body: a channel's test answer would otherwise read back what any address answered.
 * `dispatcher`: the alerts' agent, whose every connection passes the outbound address policy.
 */
export async function postJson(options: {
  url: string;
  body: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  dispatcher?: Dispatcher | undefined;
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
      ...(options.dispatcher && { dispatcher: options.dispatcher }),
    });
  } catch (error) {
    const refused = (error as { code?: unknown }).code === OUTBOUND_REFUSED_CODE;
    if (refused) throw new ChannelSendError((error as Error).message, false);
    throw new ChannelSendError(`could not reach the receiver: ${(error as Error).message}`, true);
  }
  await drain(answer.body);
  if (answer.statusCode >= 200 && answer.statusCode < 300) return;
  const retryable = answer.statusCode === 429 || answer.statusCode >= 500;
  throw new ChannelSendError(`the receiver answered ${answer.statusCode}`, retryable);
}

/** Reads a little of a body and lets the rest go (the connection is kept only for a short answer). */
async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size >= MAX_ANSWER_BYTES) {
        body.destroy();
        break;
      }
    }
  } catch {
    // A body that fails midway changes nothing: the status decided.
  }
}
