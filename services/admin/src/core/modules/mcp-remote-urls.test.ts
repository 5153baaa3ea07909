import { describe, expect, it } from 'vitest';
import { isUnderPrefix } from './mcp-remote-urls.ts';

const PREFIX = 'http://tools.example/mcp/';

describe('isUnderPrefix (network.mcp_remote_urls)', () => {
  it.each([
    'http://tools.example/mcp/',
    'http://tools.example/mcp/server',
    'http://user:pass@tools.example/mcp/server',
    'http://tools.example/mcp/a%2fb',
    'http://tools.example/mcp/%2e%2e%2fmcp/server',
    'http://tools.example/mcp/caf%C3%A9?x=%2e%2e%2f',
    'http://tools.example/mcp/100%25',
    'http://tools.example/mcp/%zz',
  ])('takes %s', (url) => {
    expect(isUnderPrefix(url, PREFIX)).toBe(true);
  });

  it.each([
    // Issue 42 defect 2: one segment for the URL parser, /admin for a server that decodes it.
    'http://tools.example/mcp/%2e%2e%2fadmin',
    'http://tools.example/mcp/%2E%2E%2Fadmin',
    'http://tools.example/mcp/.%2e/admin',
    'http://tools.example/mcp/x%2f..%2f..%2fadmin',
    'http://tools.example/mcp/%2e%2e%5cadmin',
    // Decoded twice (a proxy, then the server).
    'http://tools.example/mcp/%252e%252e%252fadmin',
    'http://tools.example/mcp/%25252e%25252e%25252fadmin',
    // Encoded deeper than any server decodes.
    'http://tools.example/mcp/%2525252e',
    'http://tools.example/mcp/%c0%ae%c0%ae/admin',
    'http://tools.example/mcpx',
    'http://tools.example/admin',
    'https://tools.example/mcp/server',
    'http://tools.example:8080/mcp/server',
    'http://tools.example.evil/mcp/server',
  ])('refuses %s', (url) => {
    expect(isUnderPrefix(url, PREFIX)).toBe(false);
  });
});
