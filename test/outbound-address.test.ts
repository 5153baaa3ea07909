// The outbound address policy end to end (issue 25 defect 2), in both modes: every caller that takes a URL from
// the admin API (provider base_url, MCP http/sse clients, alert channels, guardrail endpoints) refuses every
// metadata, link-local, private and unspecified form; a Developer adds no remote MCP client; no remote body is
// read back; the config file's own URLs and a rebound name are refused when the connection opens.
//
// A gateway that wrongly accepted such a URL could dial it at once, so all of it runs in a loopback-only network
// namespace (`unshare -rnm`, test/support/outbound-refusals.ts): there the hostile addresses are on `lo`, where a
// canary counts every connection. Nothing can leave the machine, and nothing outside 127.0.0.0/8 of the machine
// itself is ever reached.
import { spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { scaled } from '@gw/testkit';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('./support/outbound-refusals.ts', import.meta.url));
const SECRET_BODY = 'internal-secret-body-7c1e9a';
const CALLERS = ['provider', 'mcp', 'alert_webhook', 'alert_slack', 'guardrail_webhook', 'guardrail_azure'];

// biome-ignore lint/suspicious/noExplicitAny: the report is asserted field by field
type Report = Record<string, any>;

function runIsolated(mode: 'embedded' | 'cluster'): Promise<Report> {
  const outside = `${readlinkSync('/proc/self/ns/net')} ${readlinkSync('/proc/self/ns/mnt')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-rnm', process.execPath, SCRIPT, mode], {
      env: { ...process.env, GW_OUTSIDE_NAMESPACES: outside, REDIS_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-8_000);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = stdout.split('\n').find((text) => text.startsWith('OUTBOUND-REPORT '));
      if (!line) {
        reject(new Error(`the isolated run printed no report (exit ${code}):\n${stderr}`));
        return;
      }
      resolve(JSON.parse(line.slice('OUTBOUND-REPORT '.length)));
    });
  });
}

describe.each(['embedded', 'cluster'] as const)('outbound address policy (%s, isolated)', (mode) => {
  it('refuses every hostile address at write and at connect time; nothing reached it', {
    timeout: scaled(240_000),
  }, async () => {
    const report = await runIsolated(mode);
    expect(report['failure']).toBeUndefined();

    // Every caller, every form: 400 naming the field and why, and nothing stored.
    const writes: Array<{ caller: string; url: string; status: number; message: string }> = report['writes'];
    expect(new Set(writes.map((write) => write.caller))).toEqual(new Set(CALLERS));
    for (const write of writes) {
      expect({ ...write, status: write.status }).toMatchObject({ status: 400 });
      expect(write.message).toMatch(
        /^(network_config\.base_url|connection_string|url|endpoint): .*gw does not call it$/,
      );
    }
    expect(report['alert_email']).toMatchObject({
      status: 400,
      body: { error: { code: 'outbound_address_refused', param: 'host' } },
    });

    // A Developer (mcp:write, no mcp:remote) adds no http MCP client, loopback included.
    expect(report['developer_mcp']).toMatchObject({
      status: 403,
      body: {
        error: {
          type: 'forbidden',
          code: 'missing_permission',
          message: expect.stringContaining('mcp:remote'),
        },
      },
    });

    // What an internal service answered is never read back: a fixed description and its status.
    const readBack = report['read_back'];
    expect(readBack.add_error).toBe('connect failed: the server answered HTTP 500');
    expect(readBack.get_error).toBe('connect failed: the server answered HTTP 500');
    expect(readBack.test).toMatchObject({ outcome: 'failed', error: 'the receiver answered 500' });
    expect(readBack.internal_hits).toBeGreaterThan(0);
    expect(JSON.stringify(readBack)).not.toContain(SECRET_BODY);

    // The config file's own URLs pass the policy when the connection opens (the name resolves to 10.0.0.1).
    expect(report['config_mcp']).toMatchObject({
      state: 'error',
      error: expect.stringMatching(/^connect failed: internal\.test \(10\.0\.0\.1\) is a private address/),
    });
    expect(report['config_provider']).toMatchObject({
      status: 502,
      body: {
        error: {
          type: 'upstream_unreachable',
          message: expect.stringContaining('10.0.0.1) is a private address'),
        },
      },
    });

    // DNS rebinding: public when written, the metadata address when sent.
    expect(report['rebind_write']).toMatchObject({ status: 201 });
    expect(report['rebind_send']).toMatchObject({
      outcome: 'failed',
      error: 'rebind.test (169.254.169.254) is a cloud metadata address; gw does not call it',
    });

    expect(report['canary_connections']).toBe(0);
  });
});
