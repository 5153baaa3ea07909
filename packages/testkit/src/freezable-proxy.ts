import { type AddressInfo, createConnection, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server that can be frozen: while frozen it still accepts connections (as the
 * kernel does for a SIGSTOPped process) but forwards nothing either way, so the peer sees a replica that
 * stopped answering, pings included. Thawed, it forwards what was held.
 */
export interface FreezableProxy {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /**
   * `answers`: only what the server sends is held, as for a client frozen (SIGSTOP) after its last write: what
   * it sent still runs on the server, and it reads no answer.
   */
  freeze(what?: 'both' | 'answers'): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: { host: string; port: number }, host = '127.0.0.1') {
  let frozen: 'both' | 'answers' | undefined;
  let accepted = 0;
  const sockets = new Set<Socket>();
  /** Bytes that arrived while frozen, with where they go, forwarded in order on thaw. */
  const held: Array<{ to: Socket; bytes: Buffer }> = [];
  const forward = (from: Socket, to: Socket, answers: boolean) => {
    from.on('data', (bytes: Buffer) => {
      if (frozen === 'both' || (frozen === 'answers' && answers)) held.push({ to, bytes });
      else to.write(bytes);
    });
    from.on('end', () => to.end());
  };
  const server = createServer((client) => {
    accepted++;
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    forward(client, upstream, false);
    forward(upstream, client, true);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const proxy: FreezableProxy = {
    port: (server.address() as AddressInfo).port,
    connections: () => accepted,
    freeze(what = 'both') {
      frozen = what;
    },
    thaw() {
      frozen = undefined;
      for (const { to, bytes } of held.splice(0)) if (!to.destroyed) to.write(bytes);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
