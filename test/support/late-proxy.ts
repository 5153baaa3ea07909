import { type AddressInfo, createConnection, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy that is there before its target is: while closed it accepts every connection and closes it at once
 * (as a Redis or a router still starting would refuse it), counting them; open, it forwards to the target;
 * `cut` closes every connection and refuses again (the target went away).
 */
export interface LateProxy {
  port: number;
  /** Connections closed unanswered so far: the attempts of whoever tried to connect meanwhile. */
  refused(): number;
  open(): void;
  cut(): void;
  close(): Promise<void>;
}

export async function startLateProxy(target: { host: string; port: number }): Promise<LateProxy> {
  let open = false;
  let refused = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (!open) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    refused: () => refused,
    open() {
      open = true;
    },
    cut() {
      open = false;
      cutAll();
    },
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        server.close(() => resolve());
      }),
  };
}
