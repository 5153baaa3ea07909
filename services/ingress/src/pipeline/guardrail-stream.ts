import { endsInPlaceholder, type GuardrailSession } from '@gw/guardrails';
import type { StreamItem } from '@gw/router';

type Choice = StreamItem['chunk']['choices'][number];

/** The streamed text a choice carries in one chunk (chat delta content, or a text stream's text). */
function textOf(choice: Choice): string {
  if (typeof choice.delta?.content === 'string') return choice.delta.content;
  return typeof choice.text === 'string' ? choice.text : '';
}

function withText(choice: Choice, text: string): Choice {
  if (typeof choice.delta?.content === 'string')
    return { ...choice, delta: { ...choice.delta, content: text } };
  return { ...choice, text };
}

/** Characters of each choice's checked text that the next window is checked with, to catch what a boundary splits. */
const OVERLAP = 64;

function commonPrefix(left: string, right: string): number {
  let length = 0;
  while (length < left.length && length < right.length && left[length] === right[length]) length++;
  return length;
}

export interface GuardStreamOptions {
  session: GuardrailSession;
  /** Check the output (else only put placeholders back). */
  check: boolean;
  /** Hold the whole answer and check it once; otherwise per window of `windowChars` characters. */
  buffered: boolean;
  windowChars: number;
  /** Called once the stream ended, failed or was abandoned (the outcome is final then). */
  end(): void;
  /** `extra_fields.guardrails` of the first chunk relayed (its status: 246 when the input was changed). */
  summary(): Record<string, unknown>;
}

/**
 * A streamed answer under output guardrails (docs/guardrails.md "Streams"): chunks are held until a window of
 * text is complete (or, buffered, until the end), the window's text of each choice is checked, placeholders of
 * reversible redaction are put back, and the chunks go on, a changed text in the first chunk of its choice. A
 * block before anything was relayed is an ordinary 446 answer; after, the stream ends with an error event.
 * A window never ends inside what may be a placeholder, so one is always put back whole. Each window is
 * checked after the last characters of the one before, so a word or value split by the boundary is still
 * found; a value redacted that way was partly relayed already (`stream_output: buffer` avoids it).
 */
export async function* guardStream(
  items: AsyncIterable<StreamItem>,
  options: GuardStreamOptions,
): AsyncGenerator<StreamItem> {
  const { session } = options;
  let held: StreamItem[] = [];
  let heldText = '';
  let prior = 0;
  let first = true;
  /** The end of each choice's checked text so far. */
  const tails = new Map<number, string>();

  async function flush(): Promise<StreamItem[]> {
    const window = held;
    held = [];
    heldText = '';
    const indexes = [
      ...new Set(window.flatMap((item) => item.chunk.choices.map((choice) => choice.index))),
    ].sort();
    const texts = indexes.map((index) =>
      window
        .map((item) =>
          item.chunk.choices
            .filter((choice) => choice.index === index)
            .map(textOf)
            .join(''),
        )
        .join(''),
    );
    let next: readonly string[] = texts;
    if (options.check && texts.some((text) => text.length > 0)) {
      const contexts = indexes.map((index) => tails.get(index) ?? '');
      const checked = await session.output({
        texts: texts.map((text, position) => contexts[position] + text),
        locations: indexes.map((index) => `choices[${index}].delta.content`),
        priorLength: prior - contexts.reduce((sum, context) => sum + context.length, 0),
      });
      next = checked.map((text, position) => {
        const context = contexts[position]!;
        // Unchanged context: the window is what follows it; else what follows the part that was not changed.
        return text.startsWith(context)
          ? text.slice(context.length)
          : text.slice(commonPrefix(text, context));
      });
      indexes.forEach((index, position) => {
        tails.set(index, (checked[position] ?? '').slice(-OVERLAP));
      });
    }
    prior += texts.reduce((sum, text) => sum + text.length, 0);
    if (session.restores) next = next.map((text) => session.restore(text));
    const changed = new Set(indexes.filter((_, position) => next[position] !== texts[position]));
    let released = window;
    if (changed.size > 0) {
      const placed = new Set<number>();
      released = window.map((item) => {
        if (!item.chunk.choices.some((choice) => changed.has(choice.index))) return item;
        const choices = item.chunk.choices.map((choice) => {
          if (!changed.has(choice.index)) return choice;
          if (typeof choice.delta?.content !== 'string' && typeof choice.text !== 'string') return choice;
          if (placed.has(choice.index)) return withText(choice, '');
          placed.add(choice.index);
          return withText(choice, next[indexes.indexOf(choice.index)] ?? '');
        });
        const { json: _json, native: _native, ...rest } = item;
        return { ...rest, chunk: { ...item.chunk, choices } };
      });
    }
    if (first && released.length > 0) {
      first = false;
      const [head, ...rest] = released;
      const extra = { ...head!.chunk.extra_fields, guardrails: options.summary() };
      const { json: _json, ...headRest } = head!;
      released = [{ ...headRest, chunk: { ...head!.chunk, extra_fields: extra } }, ...rest];
    }
    return released;
  }

  try {
    for await (const item of items) {
      held.push(item);
      for (const choice of item.chunk.choices) heldText += textOf(choice);
      if (options.buffered || heldText.length < options.windowChars) continue;
      if (session.restores && endsInPlaceholder(heldText)) continue;
      yield* await flush();
    }
    if (held.length > 0) yield* await flush();
  } finally {
    options.end();
  }
}
