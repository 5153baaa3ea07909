// The private network of `pnpm bench:netns`: one bridge namespace and one namespace per role, each joined to the
// bridge by a veth pair (`eth0` inside the role's namespace), with addresses from 198.18.0.0/15 (RFC 2544's
// benchmarking range) that exist only inside these namespaces. Nothing here touches the host's own interfaces,
// routes or addresses: every veth is created inside the bridge namespace with its peer directly in the role's.
import { spawnSync } from 'node:child_process';

export const ROLES = ['client', 'ingress', 'router', 'gov', 'redis', 'mock'] as const;
export type Role = (typeof ROLES)[number];

/** Where the delay of a run is applied: every role's `eth0`, on egress, so each one-way crossing pays it once. */
const DEVICE = 'eth0';
const SUBNET = '198.18.0';

export interface Network {
  /** Namespace names are `<prefix>-<role>` and `<prefix>-br`; the prefix carries the pid (`gwb<pid>`). */
  prefix: string;
  namespace(role: Role): string;
  address(role: Role): string;
}

/** Namespaces this process created and has not deleted yet (what `destroyNetwork` removes). */
const created: string[] = [];

/** Every program this mode runs goes through here or `inNamespace` (iproute2's, Redis's, node). */
const attempt = (program: string, args: string[]) => spawnSync(program, args, { encoding: 'utf8' });

function command(program: 'ip' | 'tc', args: string[]): string {
  const result = attempt(program, args);
  if (result.error) throw new Error(`${program} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${program} ${args.join(' ')}: exit ${result.status}: ${result.stderr.trim()}`);
  }
  return result.stdout;
}

/** Why this machine cannot run the mode (not Linux, not root, `ip` or `tc` missing), or undefined. */
export function missingPrerequisite(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'creating network namespaces needs root (run it with sudo)';
  for (const program of ['ip', 'tc', 'redis-server', 'redis-cli']) {
    const probe = attempt(program, program.startsWith('redis') ? ['--version'] : ['-V']);
    if (probe.error) {
      const hint = program.startsWith('redis') ? 'the redis-server package' : 'the iproute2 package';
      return `'${program}' is not installed (${hint})`;
    }
  }
  return undefined;
}

export function createNetwork(prefix: string): Network {
  const bridge = `${prefix}-br`;
  const network: Network = {
    prefix,
    namespace: (role) => `${prefix}-${role}`,
    address: (role) => `${SUBNET}.${10 + ROLES.indexOf(role)}`,
  };
  addNamespace(bridge);
  command('ip', ['-n', bridge, 'link', 'add', 'br0', 'type', 'bridge']);
  command('ip', ['-n', bridge, 'link', 'set', 'br0', 'up']);
  for (const role of ROLES) {
    const namespace = network.namespace(role);
    addNamespace(namespace);
    const outer = `v-${role}`;
    command('ip', [
      '-n',
      bridge,
      'link',
      'add',
      outer,
      'type',
      'veth',
      'peer',
      'name',
      DEVICE,
      'netns',
      namespace,
    ]);
    command('ip', ['-n', bridge, 'link', 'set', outer, 'master', 'br0', 'up']);
    command('ip', ['-n', namespace, 'addr', 'add', `${network.address(role)}/24`, 'dev', DEVICE]);
    command('ip', ['-n', namespace, 'link', 'set', DEVICE, 'up']);
    command('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
  }
  return network;
}

function addNamespace(name: string): void {
  command('ip', ['netns', 'add', name]);
  created.push(name);
}

/** The command line that runs `program` inside a namespace: `ip netns exec` execs it, so its pid is the program's. */
export function inNamespace(
  namespace: string,
  program: string,
  args: string[],
): { file: string; args: string[] } {
  return { file: 'ip', args: ['netns', 'exec', namespace, program, ...args] };
}

/** `program` run inside a namespace to its end: its stdout, or '' when it failed. */
export function runInNamespace(namespace: string, program: string, args: string[]): string {
  const line = inNamespace(namespace, program, args);
  const result = attempt(line.file, line.args);
  return result.status === 0 ? result.stdout : '';
}

/**
 * Whether `tc … netem` works here (it needs the kernel's sch_netem): tried on the loopback of one of this run's
 * namespaces. The error text when it does not.
 */
export function netemError(network: Network): string | undefined {
  const namespace = network.namespace('client');
  try {
    command('tc', ['-n', namespace, 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms']);
    command('tc', ['-n', namespace, 'qdisc', 'del', 'dev', 'lo', 'root']);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Every role's egress delayed by `ms` (0: no qdisc at all, the veth's default). */
export function setDelay(network: Network, ms: number): void {
  for (const role of ROLES) {
    const namespace = network.namespace(role);
    if (ms === 0) {
      attempt('tc', ['-n', namespace, 'qdisc', 'del', 'dev', DEVICE, 'root']);
    } else {
      command('tc', [
        '-n',
        namespace,
        'qdisc',
        'replace',
        'dev',
        DEVICE,
        'root',
        'netem',
        'delay',
        `${ms}ms`,
      ]);
    }
  }
}

export type Packets = Record<Role, number>;

/** Packets each role's `eth0` sent and received so far (TCP ACKs included). */
export function packetCounters(network: Network): Packets {
  const counts = {} as Packets;
  for (const role of ROLES) {
    const [link] = JSON.parse(
      command('ip', ['-n', network.namespace(role), '-s', '-j', 'link', 'show', DEVICE]),
    ) as [{ stats64: { rx: { packets: number }; tx: { packets: number } } }];
    counts[role] = link.stats64.rx.packets + link.stats64.tx.packets;
  }
  return counts;
}

/** Pids of the processes running in a namespace of this run (what `ip netns exec` started there). */
function namespacePids(namespace: string): number[] {
  const result = attempt('ip', ['netns', 'pids', namespace]);
  return result.status === 0 ? result.stdout.split('\n').filter(Boolean).map(Number) : [];
}

/**
 * Kills whatever still runs in this run's namespaces (by pid, SIGKILL) and deletes them, which deletes their veths
 * and the bridge with them. Synchronous, so it also works from an `exit` handler; safe to call twice.
 */
export function destroyNetwork(): string[] {
  const problems: string[] = [];
  for (const namespace of created) {
    for (const pid of namespacePids(namespace)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }
  while (created.length > 0) {
    const namespace = created.pop()!;
    const result = attempt('ip', ['netns', 'del', namespace]);
    if (result.status !== 0) problems.push(`ip netns del ${namespace}: ${result.stderr.trim()}`);
  }
  return problems;
}
