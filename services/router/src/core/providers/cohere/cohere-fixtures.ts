/**
 * Cohere v2 answers in their true wire format (shapes as recorded from api.cohere.com): JSON bodies, and
 * SSE streams where every event is named both in `event:` and in the payload's `type`.
 */

type CohereEvent = { type: string } & Record<string, unknown>;

/** One SSE event per entry, as Cohere frames them. */
export function cohereSse(events: CohereEvent[]): string[] {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

function usage(input: number, output: number, cached?: number) {
  return {
    billed_units: { input_tokens: input - 1, output_tokens: output },
    tokens: { input_tokens: input, output_tokens: output },
    ...(cached === undefined ? {} : { cached_tokens: cached }),
  };
}

export const cohereChatAnswer = {
  id: 'c14c80c3-18eb-4519-9460-6c92edd8cfb4',
  message: { role: 'assistant', content: [{ type: 'text', text: 'Hello there' }] },
  finish_reason: 'COMPLETE',
  usage: usage(10, 5, 2),
};

export const cohereToolCallAnswer = {
  id: 'f201af17-e24a-4396-8f6a-98e8bf9c3432',
  message: {
    role: 'assistant',
    tool_plan: 'I will look up the weather in Paris.',
    tool_calls: [
      {
        id: 'get_weather_dqgshstja6p9',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ],
  },
  finish_reason: 'TOOL_CALL',
  usage: usage(20, 8),
};

export const cohereTextAnswer = {
  id: '5a4d3b8e-0b4f-4a38-9d0e-1f2a3b4c5d6e',
  message: { role: 'assistant', content: [{ type: 'text', text: 'Once upon' }] },
  finish_reason: 'COMPLETE',
  usage: usage(3, 2),
};

export const cohereErrorAnswer = {
  id: 'a6f0bd44-3b27-4d38-9a6c-0d2b0c4e4f59',
  message: 'bad things happened',
};

export const cohereEmbedAnswer = {
  id: 'f5aa3e7b-f011-4c5c-a825-f94669f760e5',
  texts: ['a', 'b'],
  embeddings: {
    float: [
      [0.1, 0.2],
      [0.3, 0.4],
    ],
  },
  meta: { api_version: { version: '2' }, billed_units: { input_tokens: 2 } },
  response_type: 'embeddings_by_type',
};

const messageStart = (id: string): CohereEvent => ({
  id,
  type: 'message-start',
  delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
});

const messageEnd = (finishReason: string, tokens: ReturnType<typeof usage>): CohereEvent => ({
  type: 'message-end',
  delta: { finish_reason: finishReason, usage: tokens },
});

const contentDelta = (text: string): CohereEvent => ({
  type: 'content-delta',
  index: 0,
  delta: { message: { content: { text } } },
});

/** 'Hel' + 'lo th' + 'ére', the exact event sequence of a Cohere text stream. */
export const cohereTextStreamEvents: CohereEvent[] = [
  messageStart('321d178c-2c12-44d3-ae42-2f5510f6b1cc'),
  { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
  contentDelta('Hel'),
  contentDelta('lo th'),
  contentDelta('ére'),
  { type: 'content-end', index: 0 },
  messageEnd('COMPLETE', usage(10, 5, 2)),
];

const toolCallDelta = (fragment: string): CohereEvent => ({
  type: 'tool-call-delta',
  index: 0,
  delta: { message: { tool_calls: { function: { arguments: fragment } } } },
});

/** A tool call stream: the plan, then the call with its arguments in fragments. */
export const cohereToolStreamEvents: CohereEvent[] = [
  messageStart('2941521a-b87a-45f6-9b0d-235fd66c3025'),
  { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will' } } },
  { type: 'tool-plan-delta', delta: { message: { tool_plan: ' check the weather.' } } },
  {
    type: 'tool-call-start',
    index: 0,
    delta: {
      message: {
        tool_calls: {
          id: 'get_weather_e8p4pn45zt0t',
          type: 'function',
          function: { name: 'get_weather', arguments: '' },
        },
      },
    },
  },
  toolCallDelta('{"'),
  toolCallDelta('city'),
  toolCallDelta('": "'),
  toolCallDelta('Paris"}'),
  { type: 'tool-call-end', index: 0 },
  messageEnd('TOOL_CALL', usage(20, 8)),
];
