import type { ChatCompletionChunk, FinishReason, Usage } from '@gw/shared';

/** A piece of content being streamed: text, or one tool call whose arguments arrive in pieces. */
export type StreamBlock = { type: 'text' } | { type: 'tool_call'; id: string; name: string };

/** What happened to the content blocks of a stream, in order. Indices count blocks from 0. */
export type BlockEvent =
  | { type: 'block_start'; index: number; block: StreamBlock }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'arguments_delta'; index: number; arguments: string }
  | { type: 'block_stop'; index: number; block: StreamBlock; text: string };

/**
 * Turns OpenAI-shaped chat chunks (what the router streams, whatever the provider) into content blocks: the
 * common ground of the block-structured framings (Anthropic, Bedrock Converse, OpenAI Responses, Gemini). A
 * text block opens at the first text and closes when a tool call starts or the answer finishes; each tool
 * call is its own block. Only the first choice is followed (these surfaces ask for one). Finish reason and
 * usage are kept for the framing's end, which is where those APIs carry them.
 */
export class ChatChunksToBlocks {
  finishReason: FinishReason = null;
  usage: Usage | undefined;
  model = '';
  id = '';
  private open: { index: number; block: StreamBlock; text: string } | undefined;
  private nextIndex = 0;
  /** OpenAI tool call index → block index (a late argument piece of an earlier call still finds it). */
  private readonly toolBlocks = new Map<number, number>();

  push(chunk: ChatCompletionChunk): BlockEvent[] {
    if (!this.model && chunk.model) this.model = chunk.model;
    if (!this.id && chunk.id) this.id = chunk.id;
    if (chunk.usage) this.usage = chunk.usage;
    const events: BlockEvent[] = [];
    const choice = chunk.choices.find((candidate) => candidate.index === 0) ?? chunk.choices[0];
    if (!choice) return events;
    const text = choice.delta?.content ?? choice.text;
    if (text) {
      if (this.open?.block.type !== 'text') this.start(events, { type: 'text' });
      this.open!.text += text;
      events.push({ type: 'text_delta', index: this.open!.index, text });
    }
    for (const call of choice.delta?.tool_calls ?? []) {
      let index = this.toolBlocks.get(call.index);
      if (index === undefined) {
        index = this.start(events, {
          type: 'tool_call',
          id: call.id ?? `call_${this.nextIndex}`,
          name: call.function?.name ?? '',
        });
        this.toolBlocks.set(call.index, index);
      }
      const piece = call.function?.arguments;
      if (piece) {
        if (this.open?.index === index) this.open.text += piece;
        events.push({ type: 'arguments_delta', index, arguments: piece });
      }
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      this.close(events);
    }
    return events;
  }

  /** Closes what is still open; the finish reason defaults to `stop`. */
  end(): BlockEvent[] {
    const events: BlockEvent[] = [];
    this.close(events);
    this.finishReason ??= 'stop';
    return events;
  }

  private start(events: BlockEvent[], block: StreamBlock): number {
    this.close(events);
    const index = this.nextIndex++;
    this.open = { index, block, text: '' };
    events.push({ type: 'block_start', index, block });
    return index;
  }

  private close(events: BlockEvent[]): void {
    if (!this.open) return;
    events.push({ type: 'block_stop', index: this.open.index, block: this.open.block, text: this.open.text });
    this.open = undefined;
  }
}
