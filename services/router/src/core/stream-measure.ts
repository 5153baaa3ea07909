import type { ChatCompletionChunk } from '@gw/shared';
import type { HealthBoard, HealthTarget } from '@gw/shared/health';

/**
 * What a stream tells its target's health as it runs: it is counted at its first content chunk, with its time
 * to first token (a role-only preamble is no token), and its latency and tokens are measured when it ends. One
 * that ends without content is counted at its end; one that breaks off counts as the failure it is recorded as.
 */
export class StreamMeasure {
  private counted = false;
  private tokens: number | undefined;
  private readonly options: { health: HealthBoard; target: HealthTarget; startedAt: number };

  /** `startedAt`: when the attempt began (`performance.now()`). */
  constructor(options: { health: HealthBoard; target: HealthTarget; startedAt: number }) {
    this.options = options;
  }

  see(chunk: ChatCompletionChunk): void {
    if (chunk.usage) this.tokens = chunk.usage.total_tokens;
    if (this.counted || !carriesContent(chunk)) return;
    this.counted = true;
    this.options.health.record(this.options.target, { failure: false, ttftMs: this.elapsedMs() });
  }

  /** The stream ended as it should. */
  end(): void {
    const samples = { latencyMs: this.elapsedMs(), tokens: this.tokens };
    if (this.counted) this.options.health.measure(this.options.target, samples);
    else this.options.health.record(this.options.target, { failure: false, ...samples });
    this.counted = true;
  }

  private elapsedMs(): number {
    return performance.now() - this.options.startedAt;
  }
}

/** Text, a tool call, a refusal or any other delta member but the role (reasoning, audio) is content. */
function carriesContent(chunk: ChatCompletionChunk): boolean {
  return chunk.choices.some(
    (choice) =>
      Boolean(choice.text) ||
      Object.entries(choice.delta ?? {}).some(
        ([name, value]) =>
          name !== 'role' &&
          value !== undefined &&
          value !== null &&
          value !== '' &&
          !(Array.isArray(value) && value.length === 0),
      ),
  );
}
