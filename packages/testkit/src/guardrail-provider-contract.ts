import {
  type CheckRequest,
  type GuardrailProvider,
  GuardrailProviderError,
  type RequestMetadata,
} from '@gw/guardrails';
import { expect, it } from 'vitest';

/** A provider under contract, and its fake (testkit's guardrail fakes: `FORBIDDEN` blocks, `SLOW` is slow). */
export interface GuardrailContractSubject {
  provider: GuardrailProvider;
  /** The same provider with credentials the service refuses; none for providers that need no service. */
  refused?: GuardrailProvider;
}

export interface GuardrailContractOptions {
  create(): GuardrailContractSubject;
  /** How the provider treats an e-mail address: rewrites it, or does not see it as a violation. */
  emails: 'rewrites' | 'ignores';
  /** Needs a service: it must fail as GuardrailProviderError when refused, and stop when aborted. */
  remote: boolean;
}

const METADATA: RequestMetadata = {
  request_type: 'chat',
  model: 'gpt-4o',
  provider: 'openai',
  headers: {},
  virtual_key: '',
  virtual_key_id: '',
  team: '',
  customer: '',
  user: '',
  mcp_client: '',
  tool: '',
  arguments: {},
};

function request(texts: string[], signal = new AbortController().signal): CheckRequest {
  return { side: 'input', texts, priorLength: 0, rule: 'contract', metadata: METADATA, signal };
}

/**
 * The cases every guardrail provider passes (STYLE.md: one contract, each provider from a short test file):
 * a clean text passes, a violation is found in the right text with a category and a severity, an e-mail is
 * rewritten where the provider rewrites, and a remote one fails typed when refused and stops when aborted.
 */
export function runGuardrailProviderContract(options: GuardrailContractOptions): void {
  it('passes clean texts with no detection', async () => {
    const verdict = await options
      .create()
      .provider.check(request(['What is the capital of France?', 'Paris.']));
    expect(verdict.detections).toEqual([]);
  });

  it('finds a violation, with a category and a severity, and offers no rewrite of it', async () => {
    const verdict = await options.create().provider.check(request(['hello', 'tell me the FORBIDDEN plan']));
    expect(verdict.detections.length).toBeGreaterThan(0);
    for (const detection of verdict.detections) {
      expect(detection.category).toMatch(/\w/);
      expect(['low', 'medium', 'high']).toContain(detection.severity);
      expect([-1, 1]).toContain(detection.text);
    }
    expect(
      verdict.detections.some((detection) => detection.replacement !== undefined && !detection.span),
    ).toBe(false);
  });

  if (options.emails === 'rewrites') {
    it('rewrites an e-mail address, leaving the rest of the texts as they were', async () => {
      const texts = ['first text', 'write to jane.doe@example.com today'];
      const verdict = await options.create().provider.check(request(texts));
      expect(verdict.detections.length).toBeGreaterThan(0);
      expect(verdict.detections.every((detection) => detection.replacement !== undefined)).toBe(true);
      const spans = verdict.detections.filter((detection) => detection.span);
      const rewritten =
        spans.length > 0
          ? texts.map((text, index) => {
              const span = spans.find((detection) => detection.text === index)?.span;
              return span ? text.slice(0, span.start) + 'X' + text.slice(span.end) : text;
            })
          : verdict.rewritten;
      expect(rewritten?.[0]).toBe('first text');
      expect(rewritten?.[1]).not.toContain('jane.doe@example.com');
      expect(rewritten?.[1]).toMatch(/^write to .+ today$/);
    });
  } else {
    it('does not take an e-mail address for a violation', async () => {
      const verdict = await options.create().provider.check(request(['write to jane.doe@example.com today']));
      expect(verdict.detections).toEqual([]);
    });
  }

  if (options.remote) {
    it('fails as GuardrailProviderError when the service refuses the call', async () => {
      const { refused } = options.create();
      await expect(Promise.resolve().then(() => refused!.check(request(['hello'])))).rejects.toBeInstanceOf(
        GuardrailProviderError,
      );
    });

    it('stops waiting when its signal aborts', async () => {
      const abort = new AbortController();
      const started = performance.now();
      const pending = Promise.resolve().then(() =>
        options.create().provider.check(request(['a SLOW one'], abort.signal)),
      );
      setTimeout(() => abort.abort(), 100);
      await expect(pending).rejects.toBeDefined();
      expect(performance.now() - started).toBeLessThan(2_000);
    });
  }
}
