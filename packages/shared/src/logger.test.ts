import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';

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
