// Calls of the gateway itself (not its admin API): the playground's chat, sent with a virtual key as an app
// would send it, to the OpenAI surface of the address the operator names (gateway-address.ts's by default).

export interface ChatAnswer {
  status: number;
  /** The answer's headers gw sets (`x-gw-*`, the request id), as sent. */
  headers: [string, string][];
  text: string;
  /** The model the answer names (the one that served it). */
  model?: string | undefined;
  /** gw's `extra_fields` of the answer (provider, latency, guardrails), merged over a stream's chunks. */
  extra: Record<string, unknown>;
  error?: string | undefined;
}

const SHOWN_HEADER = /^(x-gw-|x-request-id|x-ratelimit-|retry-after)/;

/** One SSE event's JSON (`data: {…}`), or undefined for comments, `[DONE]` and partial lines. */
function eventData(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('data:')) return undefined;
  const data = line.slice(5).trim();
  if (data === '' || data === '[DONE]') return undefined;
  try {
    return JSON.parse(data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

type Choice = { delta?: { content?: string }; message?: { content?: string } };

/**
 * The browser refused to hand over the gateway's answer (CORS): the gateway answered, but does not allow this
 * page's origin. Told apart from no answer at all, since each sends the operator to a different place.
 */
export class CorsRefusal extends Error {
  constructor(address: string) {
    super(
      `the browser refused the answer of ${address} (CORS): the gateway does not allow this page's origin ${location.origin}. Add "${location.origin}" to client.cors_allowed_origins (System config, Client section), or use an address that serves this console and /v1 together.`,
    );
  }
}

/** Why a call got no answer: a CORS refusal when the address answers a request the browser need not read. */
async function noAnswer(address: string, failure: unknown): Promise<Error> {
  if (new URL(address, location.href).origin !== location.origin) {
    const answered = await fetch(address, { mode: 'no-cors' }).then(
      () => true,
      () => false,
    );
    if (answered) return new CorsRefusal(address);
  }
  return new Error(`the gateway did not answer at ${address}: ${(failure as Error).message}`);
}

export async function sendChat(options: {
  address: string;
  virtualKey: string;
  model: string;
  prompt: string;
  stream: boolean;
  /** Each piece of streamed text as it arrives. */
  onText: (text: string) => void;
}): Promise<ChatAnswer> {
  const address = options.address.replace(/\/$/, '');
  let response: Response;
  try {
    response = await fetch(`${address}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.virtualKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: options.model,
        stream: options.stream,
        messages: [{ role: 'user', content: options.prompt }],
      }),
    });
  } catch (failure) {
    throw await noAnswer(address, failure);
  }
  const headers = [...response.headers].filter(([name]) => SHOWN_HEADER.test(name));
  if (!response.ok || !options.stream || !response.body) {
    const body = (await response.json().catch(() => ({}))) as {
      model?: string;
      extra_fields?: Record<string, unknown>;
      choices?: Choice[];
      error?: { message?: string; type?: string };
    };
    const text = body.choices?.[0]?.message?.content ?? '';
    options.onText(text);
    const error = body.error && `${body.error.type ?? 'error'}: ${body.error.message ?? ''}`;
    return {
      status: response.status,
      headers,
      text,
      model: body.model,
      extra: body.extra_fields ?? {},
      error,
    };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  let text = '';
  let model: string | undefined;
  let extra: Record<string, unknown> = {};
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    pending += value;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const event = eventData(line);
      if (!event) continue;
      model ??= typeof event.model === 'string' ? event.model : undefined;
      if (event.extra_fields) extra = { ...extra, ...(event.extra_fields as Record<string, unknown>) };
      const piece = (event.choices as Choice[] | undefined)?.[0]?.delta?.content;
      if (piece) {
        text += piece;
        options.onText(text);
      }
    }
  }
  return { status: response.status, headers, text, model, extra };
}
