import { PROVIDER_CONTRACT_INPUTS, type ProviderContractOptions } from './contract-options.ts';
import { collectChunks, expectUpstreamFailure, type Harness } from './harness.ts';

/** Errors: an upstream 400 surfaces with its status and message, whole or streamed. */
export function errorCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, upstream } = options;
  harness.contractCase(
    'error',
    'error: an upstream 400 becomes a GatewayError with its status and message',
    harness.lacks('chat'),
    async () => {
      harness.answerWith(upstream.error, 400);
      await expectUpstreamFailure(
        adapter.chat!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context()),
      );
    },
  );

  harness.contractCase(
    'chatStreamError',
    'chat stream error: an upstream 400 rejects the stream with its status and message',
    harness.lacks('chat_stream'),
    async () => {
      harness.answerWith(upstream.error, 400);
      await expectUpstreamFailure(
        collectChunks(
          adapter.chatStream!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context()),
        ),
      );
    },
  );
}
