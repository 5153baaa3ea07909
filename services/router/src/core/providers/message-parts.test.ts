import type { Message } from '@gw/shared';
import { expect, it } from 'vitest';
import { withoutCacheControl } from './message-parts.ts';

it('takes cache breakpoints out for OpenAI-format providers, and leaves unmarked messages as they are', () => {
  const plain: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }];
  expect(withoutCacheControl(plain)).toBe(plain);
  const system: Message = { role: 'system', content: 'Be brief.' };
  const marked: Message[] = [
    system,
    { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
  ];
  const stripped = withoutCacheControl(marked);
  expect(stripped).toEqual([system, { role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  expect(stripped[0]).toBe(system);
  expect(marked[1]!.content).toEqual([{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }]);
});
