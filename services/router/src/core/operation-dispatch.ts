import { type Operation, unsupportedOperation } from '@gw/shared';
import type { ProviderAdapter } from './providers/adapter.ts';

/** The adapter method that serves each operation. */
const METHOD_OF = {
  chat: 'chat',
  chat_stream: 'chatStream',
  text: 'text',
  text_stream: 'textStream',
  embeddings: 'embeddings',
} as const satisfies Record<Operation, keyof ProviderAdapter>;

export type MethodOf<O extends Operation> = NonNullable<ProviderAdapter[(typeof METHOD_OF)[O]]>;

/**
 * The adapter's method for an operation, bound to the adapter; unsupported_operation when the provider's
 * capabilities (data, checked before dispatch) do not list it or the adapter lacks it.
 */
export function adapterMethod<O extends Operation>(
  adapter: ProviderAdapter,
  provider: string,
  operation: O,
): MethodOf<O> {
  const method = adapter[METHOD_OF[operation]] as MethodOf<O> | undefined;
  if (!method || !adapter.capabilities.operations.includes(operation)) {
    throw unsupportedOperation(provider, operation);
  }
  return method.bind(adapter) as MethodOf<O>;
}
