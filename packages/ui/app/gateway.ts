// Calls of the gateway itself (not its admin API): the playground's chat, sent with a virtual key as an app
// would send it, to the OpenAI surface of the address the operator names (gateway-address.ts's by default).

export interface ChatAnswer {
  status: number;
  /** The answer's headers gw sets (`x-gw-*`, the request id), as sent. */
  headers: [string, string][];
  text: string;
  /** The tools the model asked to call, with their arguments as JSON text. */
  toolCalls: ToolCall[];
  /** The model the answer names (the one that served it). */
  model?: string | undefined;
  /** gw's `extra_fields` of the answer (provider, latency, guardrails), merged over a stream's chunks. */
  extra: Record<string, unknown>;
  error?: string | undefined;
}

export interface ToolCall {
  name: string;
  arguments: string;
}

/** A turn of the conversation the playground sends. */
export interface Turn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The chat as an app sends it to `/v1/chat/completions`. */
export interface ChatRequest {
  model: string;
  messages: Turn[];
  stream: boolean;
  temperature?: number | undefined;
  max_tokens?: number | undefined;
  /** OpenAI function tools, as written. */
  tools?: unknown[] | undefined;
}

const trimmed = (address: string) => address.replace(/\/$/, '');

/** The same request as a shell command, the key in it (the operator's own, for their terminal). */
export function curlOf(address: string, virtualKey: string, request: ChatRequest): string {
  const body = JSON.stringify(request).replace(/'/g, "'\\''");
  return `curl ${trimmed(address)}/v1/chat/completions \\
  -H "Authorization: Bearer ${virtualKey}" \\
  -H "Content-Type: application/json" \\
  -d '${body}'`;
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

type Choice = {
  delta?: { content?: string; tool_calls?: StreamedCall[] };
  message?: { content?: string | null; tool_calls?: { function?: { name?: string; arguments?: string } }[] };
};
type StreamedCall = { index?: number; function?: { name?: string; arguments?: string } };

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
  request: ChatRequest;
  /** Each piece of streamed text as it arrives. */
  onText: (text: string) => void;
}): Promise<ChatAnswer> {
  const address = trimmed(options.address);
  let response: Response;
  try {
    response = await fetch(`${address}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.virtualKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(options.request),
    });
  } catch (failure) {
    throw await noAnswer(address, failure);
  }
  const headers = [...response.headers].filter(([name]) => SHOWN_HEADER.test(name));
  if (!response.ok || !options.request.stream || !response.body) {
    const body = (await response.json().catch(() => ({}))) as {
      model?: string;
      extra_fields?: Record<string, unknown>;
      choices?: Choice[];
      error?: { message?: string; type?: string };
    };
    const message = body.choices?.[0]?.message;
    const text = message?.content ?? '';
    options.onText(text);
    const error = body.error && `${body.error.type ?? 'error'}: ${body.error.message ?? ''}`;
    return {
      status: response.status,
      headers,
      text,
      toolCalls: (message?.tool_calls ?? []).map((call) => ({
        name: call.function?.name ?? '',
        arguments: call.function?.arguments ?? '',
      })),
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
  // A streamed tool call comes in pieces: its name first, its arguments in parts, by its index.
  const calls: ToolCall[] = [];
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
      const delta = (event.choices as Choice[] | undefined)?.[0]?.delta;
      for (const piece of delta?.tool_calls ?? []) {
        const index = piece.index ?? 0;
        calls[index] ??= { name: '', arguments: '' };
        const call = calls[index];
        call.name += piece.function?.name ?? '';
        call.arguments += piece.function?.arguments ?? '';
      }
      if (delta?.content) {
        text += delta.content;
        options.onText(text);
      }
    }
  }
  return { status: response.status, headers, text, toolCalls: calls.filter(Boolean), model, extra };
}
