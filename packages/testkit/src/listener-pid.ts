import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The process listening on a loopback TCP port (Linux: /proc/net/tcp*, then the process holding that socket),
 * for tests that freeze or kill one replica of a cluster.
 */
export async function listenerPid(port: number): Promise<number> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A') inodes.add(fields[9]!);
    }
  }
  if (inodes.size === 0) throw new Error(`nothing listens on port ${port}`);
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const descriptors = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const descriptor of descriptors) {
      const target = await readlink(`/proc/${entry}/fd/${descriptor}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return Number(entry);
    }
  }
  throw new Error(`no process holds the listener of port ${port}`);
}
