import {
  type ChatChoice,
  type ChatCompletionChunk,
  invalidRequest,
  type TextChoice,
  type Usage,
} from '@gw/shared';
import {
  type AdapterContext,
  type AdapterResult,
  type ChatInput,
  chunkOf,
  type ProviderAdapter,
  type TextInput,
} from './adapter.ts';

/** Params only legacy text completions know; a chat endpoint would reject them or read them differently. */
const TEXT_ONLY_PARAMS = new Set(['echo', 'suffix', 'best_of', 'logprobs']);

function toChatInput(input: TextInput, prompt: string): ChatInput {
  const params = Object.fromEntries(
    Object.entries(input.params).filter(([name]) => !TEXT_ONLY_PARAMS.has(name)),
  );
  return { model: input.model, messages: [{ role: 'user', content: prompt }], params };
}

function prompts(input: TextInput): string[] {
  return typeof input.prompt === 'string' ? [input.prompt] : input.prompt;
}

function sumUsage(usages: Usage[]): Usage {
  const total: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const usage of usages) {
    total.prompt_tokens += usage.prompt_tokens;
    total.completion_tokens += usage.completion_tokens;
    total.total_tokens += usage.total_tokens;
  }
  return total;
}

function toTextChoice(choice: ChatChoice, index: number): TextChoice {
  return { index, text: choice.message.content ?? '', finish_reason: choice.finish_reason };
}

/** One chat chunk as a text completion chunk; role-only chunks carry nothing a text stream can use. */
function toTextChunk(chunk: ChatCompletionChunk): ChatCompletionChunk | undefined {
  const choices = chunk.choices
    .filter((choice) => choice.delta?.content || choice.finish_reason)
    .map((choice) => ({
      index: choice.index,
      text: choice.delta?.content ?? '',
      finish_reason: choice.finish_reason,
    }));
  if (choices.length === 0 && chunk.choices.length > 0) return undefined;
  return {
    id: chunk.id,
    object: 'text_completion',
    created: chunk.created,
    model: chunk.model,
    choices,
    ...(chunk.usage !== undefined ? { usage: chunk.usage } : {}),
  };
}

/**
 * Gives an adapter without legacy text completions `text` and `textStream`, served by its chat operations:
 * the prompt becomes one user message and the answer maps back to text choices. Shared by every provider
 * that lacks a completions endpoint, so the conversion exists once.
 */
export function withTextViaChat<Adapter extends ProviderAdapter>(adapter: Adapter): Adapter {
  const { chat, chatStream } = adapter;
  const operations = [...adapter.capabilities.operations];
  const viaChat: Pick<ProviderAdapter, 'text' | 'textStream'> = {};

  if (chat) {
    if (!operations.includes('text')) operations.push('text');
    viaChat.text = async (input: TextInput, context: AdapterContext): Promise<AdapterResult<TextChoice>> => {
      // Several prompts are several chats; choice i answers prompt i, as with OpenAI's completions.
      const results = await Promise.all(
        prompts(input).map((prompt) => chat.call(adapter, toChatInput(input, prompt), context)),
      );
      const first = results[0];
      if (!first) throw invalidRequest('prompt must not be empty', 'prompt');
      return {
        id: first.id,
        created: first.created,
        model: first.model,
        choices: results.map((result, index) => toTextChoice(result.choices[0]!, index)),
        usage: sumUsage(results.map((result) => result.usage)),
        systemFingerprint: first.systemFingerprint,
        raw: results.length === 1 ? first.raw : results.map((result) => result.raw),
      };
    };
  }

  if (chatStream) {
    if (!operations.includes('text_stream')) operations.push('text_stream');
    viaChat.textStream = async function* (input: TextInput, context: AdapterContext) {
      const [prompt, ...others] = prompts(input);
      if (prompt === undefined || others.length > 0) {
        throw invalidRequest('a streamed text completion served by chat takes exactly one prompt', 'prompt');
      }
      for await (const piece of chatStream.call(adapter, toChatInput(input, prompt), context)) {
        const textChunk = toTextChunk(chunkOf(piece));
        if (textChunk) yield textChunk;
      }
    };
  }

  return { ...adapter, ...viaChat, capabilities: { ...adapter.capabilities, operations, textViaChat: true } };
}
