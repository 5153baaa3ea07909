import type { Detection } from './guardrail-types.ts';

const EXCERPT_LIMIT = 80;

/** A personal value as an excerpt shows it: its edges only, so the answer does not repeat what was caught. */
export function maskValue(value: string): string {
  if (value.length <= 6) return '***';
  return `${value.slice(0, 2)}***${value.slice(-2)}`;
}

/** The affected excerpt of a detection, as the 446 body and the logs show it. */
export function excerptOf(detection: Detection, texts: readonly string[]): string {
  if (detection.span) {
    const text = texts[detection.text] ?? '';
    const value = text.slice(detection.span.start, detection.span.end);
    if (detection.personal) return maskValue(value);
    return value.length > EXCERPT_LIMIT ? `${value.slice(0, EXCERPT_LIMIT)}…` : value;
  }
  const excerpt = detection.excerpt ?? '';
  return excerpt.length > 200 ? `${excerpt.slice(0, 200)}…` : excerpt;
}

/**
 * Placeholders of reversible redaction: one per distinct value and kind (`[EMAIL_1]`), so the model can still
 * tell two addresses apart, and the answer gets the caller's values back.
 */
export class Placeholders {
  private readonly byValue = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly counts = new Map<string, number>();

  get size(): number {
    return this.byPlaceholder.size;
  }

  for(category: string, value: string): string {
    const key = `${category}\u0000${value}`;
    const known = this.byValue.get(key);
    if (known) return known;
    const count = (this.counts.get(category) ?? 0) + 1;
    this.counts.set(category, count);
    const placeholder = `[${category.toUpperCase()}_${count}]`;
    this.byValue.set(key, placeholder);
    this.byPlaceholder.set(placeholder, value);
    return placeholder;
  }

  /** The text with every placeholder of this request put back to its value. */
  restore(text: string): string {
    if (this.byPlaceholder.size === 0 || !text.includes('[')) return text;
    return text.replace(
      /\[[A-Z][A-Z0-9_.-]*_\d+\]/g,
      (placeholder) => this.byPlaceholder.get(placeholder) ?? placeholder,
    );
  }
}

/** True when a text ends inside what may be the start of a placeholder (a stream window must not end there). */
export function endsInPlaceholder(text: string): boolean {
  return /\[[A-Z0-9_.-]{0,40}$/.test(text.slice(-48));
}

/**
 * The texts with the detections' spans replaced (placeholders where `placeholders` is given and the value is
 * personal). Overlapping spans keep the first (the earliest, then the longest).
 */
export function applySpans(
  texts: readonly string[],
  detections: readonly Detection[],
  placeholders: Placeholders | undefined,
): string[] {
  const byText = new Map<number, Detection[]>();
  for (const detection of detections) {
    if (!detection.span || detection.replacement === undefined) continue;
    const list = byText.get(detection.text) ?? [];
    list.push(detection);
    byText.set(detection.text, list);
  }
  if (byText.size === 0) return [...texts];
  return texts.map((text, index) => {
    const spans = byText.get(index);
    if (!spans) return text;
    spans.sort((left, right) => left.span!.start - right.span!.start || right.span!.end - left.span!.end);
    let result = '';
    let position = 0;
    for (const detection of spans) {
      const { start, end } = detection.span!;
      if (start < position) continue;
      const value = text.slice(start, end);
      const replacement =
        placeholders && detection.personal
          ? placeholders.for(detection.category, value)
          : detection.replacement!;
      result += text.slice(position, start) + replacement;
      position = end;
    }
    return result + text.slice(position);
  });
}
