// The peers `pnpm bench` measures in the same run as gw, as their users run them, in front of the same mock: the
// floor (bench/floor-proxy.ts, the least a Node gateway can do, in the repository) and the gateways installed with
// the bench's own dependencies (bench/peers, `pnpm run bench:peers`), never in a user's install.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const PEERS = ['floor', 'portkey'] as const;
export type Peer = (typeof PEERS)[number];

/** How to start a peer and talk to it. */
export interface PeerLaunch {
  /** The script node runs, from the repository root. */
  script: string;
  args: (port: number, mockUrl: string) => string[];
  /** Node options before the script (a preload). */
  nodeArgs: string[];
  /** A GET that answers 200 once it listens. */
  readyPath: string;
  /** The OpenAI chat body (model as the upstream knows it) and the headers that point the peer at the mock. */
  model: string;
  headers: (mockUrl: string, apiKey: string) => Record<string, string>;
  install: string;
}

const PORTKEY: PeerLaunch = {
  script: 'bench/peers/node_modules/@portkey-ai/gateway/build/start-server.js',
  // --headless: no web UI and its log stream; the port has a flag, the host has none (see loopback-only.ts).
  args: (port) => ['--headless', `--port=${port}`],
  nodeArgs: ['--import', './bench/loopback-only.ts'],
  readyPath: '/',
  model: 'gpt-4o-mini',
  headers: (mockUrl, apiKey) => ({
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `${mockUrl}/v1`,
    authorization: `Bearer ${apiKey}`,
  }),
  install: 'pnpm run bench:peers',
};

const FLOOR: PeerLaunch = {
  script: 'bench/floor-proxy.ts',
  args: (port, mockUrl) => [`--port=${port}`, `--upstream=${mockUrl}`],
  nodeArgs: [],
  readyPath: '/',
  // gw's model name: the floor rewrites it as gw does.
  model: 'openai/gpt-4o-mini',
  headers: (_mockUrl, apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  install: 'nothing to install: it is bench/floor-proxy.ts',
};

export const peerLaunches: Record<Peer, PeerLaunch> = { floor: FLOOR, portkey: PORTKEY };

const installed = (root: string, peer: Peer) => existsSync(join(root, peerLaunches[peer].script));

/**
 * BENCH_PEERS: the peers to measure, comma-separated (`''`: none). Unset: every peer that is installed, and one
 * line for each that is not, saying how to install it. A peer asked for by name and not installed is an error.
 */
export function peersEnv(root: string): { peers: Peer[]; notes: string[] } {
  const raw = process.env['BENCH_PEERS'];
  if (raw === undefined) {
    const peers = PEERS.filter((peer) => installed(root, peer));
    const notes = PEERS.filter((peer) => !installed(root, peer)).map(
      (peer) =>
        `${peer} is not measured: it is not installed (\`${peerLaunches[peer].install}\` installs it)`,
    );
    return { peers, notes };
  }
  const peers = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const peer of peers) {
    if (!(PEERS as readonly string[]).includes(peer))
      throw new Error(`BENCH_PEERS: '${peer}' is not one of ${PEERS.join(', ')}`);
    if (!installed(root, peer as Peer))
      throw new Error(`BENCH_PEERS: ${peer} is not installed; \`${peerLaunches[peer as Peer].install}\``);
  }
  return { peers: peers as Peer[], notes: [] };
}
