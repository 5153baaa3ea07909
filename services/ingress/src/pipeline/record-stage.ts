import type { Metrics, Usage } from '@gw/shared';
import { observeStream, type Stage } from './stage.ts';

/**
 * Record: what a served request used, as metrics (`gw_tokens_total` by provider and kind). Request-log and
 * trace events join here. Counts after the answer exists and never delays it.
 */
export function recordStage(metrics: Metrics): Stage {
  const count = (provider: string, usage: Usage) => {
    metrics.tokens.inc({ provider, kind: 'prompt' }, usage.prompt_tokens);
    metrics.tokens.inc({ provider, kind: 'completion' }, usage.completion_tokens);
  };
  return {
    name: 'record',
    async complete(_exchange, next) {
      const result = await next();
      count(result.provider, result.response.usage);
      return result;
    },
    async embed(_exchange, next) {
      const result = await next();
      const { usage } = result.response;
      count(result.provider, { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: 0 });
      return result;
    },
    async stream(_exchange, next) {
      const items = await next();
      let provider = '';
      let usage: Usage | undefined;
      return observeStream(items, {
        item(item) {
          if (item.provider) provider = item.provider;
          if (item.chunk.usage) usage = item.chunk.usage;
        },
        end() {
          if (provider && usage) count(provider, usage);
        },
      });
    },
  };
}
