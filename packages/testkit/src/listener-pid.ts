import { readdir, readFile, readlink } from 'node:fs/promises';

// Which process listens where, on Linux: /proc/net/tcp* lists the listening sockets (port and inode), and
// /proc/<pid>/fd links each open socket to its inode. Tests that freeze, kill or probe one replica of a cluster
// find it by its port, or find the ports of a replica they know by its pid.

/** The loopback TCP listeners: each socket's inode and its port. */
async function listeners(): Promise<Array<{ inode: string; port: number }>> {
  const found: Array<{ inode: string; port: number }> = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
      const port = fields[1]?.split(':').at(-1);
      if (port && fields[3] === '0A') found.push({ inode: fields[9]!, port: Number.parseInt(port, 16) });
    }
  }
  return found;
}

/** The inodes of the sockets a process holds open. */
async function socketInodes(pid: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const descriptors = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const descriptor of descriptors) {
    const target = await readlink(`/proc/${pid}/fd/${descriptor}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  return inodes;
}

/** The process listening on a loopback TCP port. */
export async function listenerPid(port: number): Promise<number> {
  const inodes = new Set((await listeners()).filter((row) => row.port === port).map((row) => row.inode));
  if (inodes.size === 0) throw new Error(`nothing listens on port ${port}`);
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    for (const inode of await socketInodes(Number(entry))) if (inodes.has(inode)) return Number(entry);
  }
  throw new Error(`no process holds the listener of port ${port}`);
}

/** The TCP ports a process listens on (a replica's metrics port, when only its main port is known). */
export async function listeningPorts(pid: number): Promise<number[]> {
  const inodes = await socketInodes(pid);
  return [...new Set((await listeners()).filter((row) => inodes.has(row.inode)).map((row) => row.port))];
}
