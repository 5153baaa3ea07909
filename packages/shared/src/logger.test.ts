import { describe, expect, it, vi } from 'vitest';
import { createLogger, throttledLog } from './logger.ts';

describe('createLogger', () => {
  it('takes credentials out of fields and of the errors it logs', () => {
    const lines: string[] = [];
    const logger = createLogger({
      service: 'test',
      destination: { write: (line: string) => lines.push(line) },
    });
    logger.info({ headers: { authorization: 'Bearer sk-caller-0123456789abcdef' } }, 'request');
    logger.error(
      {
        err: new Error(
          'fetch https://gw:hunter2pass@mcp.example.com/?api_key=planted123 failed: sk-abcdef0123456789xyz',
        ),
      },
      'upstream failed',
    );
    const text = lines.join('');
    expect(text).not.toMatch(/sk-caller|hunter2pass|planted123|sk-abcdef/);
    expect(JSON.parse(lines[1]!).err.message).toBe(
      'fetch https://gw:[redacted]@mcp.example.com/?api_key=[redacted] failed: [redacted]',
    );
  });
});

describe('throttledLog', () => {
  it('writes one line per kind and interval and then how many it left out, never one per failure', () => {
    vi.useFakeTimers();
    try {
      const lines: Array<{ msg: string; suppressed?: number; requestId?: string }> = [];
      const logger = createLogger({
        service: 'test',
        destination: { write: (line: string) => lines.push(JSON.parse(line)) },
      });
      const failed = throttledLog(logger, 'error', { intervalMs: 10_000 });
      // An outage: 14,323 requests refused in 10 s, one kind of failure, and a few of another.
      for (let index = 0; index < 14_323; index += 1)
        failed('503:service_unavailable:', { requestId: `r${index}` }, 'request failed');
      for (let index = 0; index < 3; index += 1) failed('500:internal_error:', {}, 'request failed');
      expect(lines).toEqual([
        expect.objectContaining({ msg: 'request failed', requestId: 'r0' }),
        expect.objectContaining({ msg: 'request failed' }),
      ]);
      vi.advanceTimersByTime(10_000);
      expect(lines.slice(2)).toEqual([
        expect.objectContaining({
          msg: 'request failed (14322 more like it in the last 10 s, not logged one by one)',
          suppressed: 14_322,
        }),
        expect.objectContaining({ suppressed: 2 }),
      ]);
      // The next interval starts with a whole line again.
      failed('503:service_unavailable:', { requestId: 'later' }, 'request failed');
      expect(lines.at(-1)).toMatchObject({ msg: 'request failed', requestId: 'later' });
      vi.advanceTimersByTime(10_000);
      expect(lines).toHaveLength(5);
    } finally {
      vi.useRealTimers();
    }
  });
});
