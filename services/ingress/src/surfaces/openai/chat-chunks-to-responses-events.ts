import type { StreamItem } from '@gw/router';
import type { GatewayError } from '@gw/shared';
import type { SseFraming } from '../../http/sse-writer.ts';
import { type BlockEvent, ChatChunksToBlocks } from '../shared/chat-chunks-to-blocks.ts';
import {
  functionCallItem,
  messageItem,
  outputText,
  type ResponseEcho,
  responseObject,
  responseStatus,
  responsesUsage,
} from './chat-to-responses.ts';

/** The provider's thinking as a chunk carries it (Anthropic's thinking, Gemini's thoughts), when it does. */
function reasoningOf(item: StreamItem): string | undefined {
  const choice = item.chunk.choices.find((candidate) => candidate.index === 0) ?? item.chunk.choices[0];
  const reasoning = choice?.delta?.['reasoning_content'];
  return typeof reasoning === 'string' && reasoning ? reasoning : undefined;
}

/**
 * The Responses API's stream (`response.created` … `response.completed`, each event with `type` and
 * `sequence_number`) from chat chunks: each content block becomes an output item, and the provider's thinking
 * a `reasoning` item streamed as OpenAI streams its summaries (`response.reasoning_summary_text.delta`).
 */
export function chatChunksToResponsesEvents(options: { requestId: string; echo: ResponseEcho }): SseFraming {
  const blocks = new ChatChunksToBlocks();
  const responseId = `resp_${options.requestId}`;
  const createdAt = Math.floor(Date.now() / 1000);
  const output: unknown[] = [];
  let sequence = 0;
  let started = false;

  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  const envelope = (status: 'in_progress' | 'completed' | 'incomplete') =>
    responseObject({
      id: responseId,
      createdAt,
      model: blocks.model,
      echo: options.echo,
      status,
      output: status === 'in_progress' ? [] : output,
      usage: status === 'in_progress' ? null : responsesUsage(blocks.usage),
    });
  const itemId = (blockEvent: { index: number }, kind: 'msg' | 'fc') =>
    `${kind}_${options.requestId}_${blockEvent.index}`;
  // Output items are numbered in the order they open: blocks and reasoning items share the numbering.
  const outputIndexes = new Map<number, number>();
  let nextOutput = 0;
  let reasoning: { id: string; outputIndex: number; text: string } | undefined;
  let reasoningItems = 0;

  function reasoningDelta(delta: string): string {
    let text = '';
    if (!reasoning) {
      reasoning = { id: `rs_${options.requestId}_${reasoningItems++}`, outputIndex: nextOutput++, text: '' };
      const at = { item_id: reasoning.id, output_index: reasoning.outputIndex, summary_index: 0 };
      text +=
        event('response.output_item.added', {
          output_index: reasoning.outputIndex,
          item: { id: reasoning.id, type: 'reasoning', summary: [] },
        }) +
        event('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    }
    reasoning.text += delta;
    return (
      text +
      event('response.reasoning_summary_text.delta', {
        item_id: reasoning.id,
        output_index: reasoning.outputIndex,
        summary_index: 0,
        delta,
      })
    );
  }

  function closeReasoning(): string {
    if (!reasoning) return '';
    const { id, outputIndex, text } = reasoning;
    reasoning = undefined;
    const part = { type: 'summary_text', text };
    const item = { id, type: 'reasoning', summary: [part] };
    output.push(item);
    const at = { item_id: id, output_index: outputIndex, summary_index: 0 };
    return (
      event('response.reasoning_summary_text.done', { ...at, text }) +
      event('response.reasoning_summary_part.done', { ...at, part }) +
      event('response.output_item.done', { output_index: outputIndex, item })
    );
  }

  function translate(blockEvent: BlockEvent): string {
    if (blockEvent.type === 'block_start') outputIndexes.set(blockEvent.index, nextOutput++);
    const index = outputIndexes.get(blockEvent.index) ?? blockEvent.index;
    switch (blockEvent.type) {
      case 'block_start':
        if (blockEvent.block.type === 'text') {
          const id = itemId(blockEvent, 'msg');
          return (
            event('response.output_item.added', {
              output_index: index,
              item: messageItem(id, '', 'in_progress'),
            }) +
            event('response.content_part.added', {
              item_id: id,
              output_index: index,
              content_index: 0,
              part: outputText(''),
            })
          );
        }
        return event('response.output_item.added', {
          output_index: index,
          item: functionCallItem(
            itemId(blockEvent, 'fc'),
            { id: blockEvent.block.id, name: blockEvent.block.name, arguments: '' },
            'in_progress',
          ),
        });
      case 'text_delta':
        return event('response.output_text.delta', {
          item_id: itemId(blockEvent, 'msg'),
          output_index: index,
          content_index: 0,
          delta: blockEvent.text,
          logprobs: [],
        });
      case 'arguments_delta':
        return event('response.function_call_arguments.delta', {
          item_id: itemId(blockEvent, 'fc'),
          output_index: index,
          delta: blockEvent.arguments,
        });
      case 'block_stop': {
        if (blockEvent.block.type === 'text') {
          const id = itemId(blockEvent, 'msg');
          const item = messageItem(id, blockEvent.text, 'completed');
          output.push(item);
          return (
            event('response.output_text.done', {
              item_id: id,
              output_index: index,
              content_index: 0,
              text: blockEvent.text,
              logprobs: [],
            }) +
            event('response.content_part.done', {
              item_id: id,
              output_index: index,
              content_index: 0,
              part: outputText(blockEvent.text),
            }) +
            event('response.output_item.done', { output_index: index, item })
          );
        }
        const id = itemId(blockEvent, 'fc');
        const call = { id: blockEvent.block.id, name: blockEvent.block.name, arguments: blockEvent.text };
        const item = functionCallItem(id, call, 'completed');
        output.push(item);
        return (
          event('response.function_call_arguments.done', {
            item_id: id,
            output_index: index,
            name: call.name,
            arguments: call.arguments,
          }) + event('response.output_item.done', { output_index: index, item })
        );
      }
    }
  }

  return {
    event(item: StreamItem) {
      const { chunk } = item;
      const events = blocks.push(chunk);
      let text = '';
      if (!started) {
        started = true;
        text +=
          event('response.created', { response: envelope('in_progress') }) +
          event('response.in_progress', { response: envelope('in_progress') });
      }
      const thinking = reasoningOf(item);
      if (thinking) text += reasoningDelta(thinking);
      if (events.length > 0) text += closeReasoning();
      for (const blockEvent of events) text += translate(blockEvent);
      return text;
    },
    end() {
      let text = '';
      if (!started) {
        started = true;
        text += event('response.created', { response: envelope('in_progress') });
      }
      text += closeReasoning();
      for (const blockEvent of blocks.end()) text += translate(blockEvent);
      const status = responseStatus(blocks.finishReason);
      const type = status === 'completed' ? 'response.completed' : 'response.incomplete';
      return text + event(type, { response: envelope(status) });
    },
    error(error: GatewayError) {
      return event('error', { code: error.type, message: error.message, param: error.param });
    },
  };
}
