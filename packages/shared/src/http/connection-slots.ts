import type { Socket } from 'node:net';

/** Why a new connection was refused: the cap is held by busy connections, or its address holds its share. */
export type SlotRefusal = 'connection_cap' | 'address_share';

/**
 * The connections a port holds, oldest first, and who holds them. A socket is busy while a request or stream
 * is in flight on it (or it was upgraded); otherwise it is idle: a connection that has not finished sending a
 * request's headers yet, or a keep-alive connection between requests. When the cap is reached, the oldest idle
 * connection is closed to admit the new one, so idle sockets can never keep `/health` or a real request out;
 * only a cap held by busy connections refuses. An address at its share gives up its own oldest idle connection
 * in the same way, and is refused when all of its connections are busy.
 */
export class ConnectionSlots {
  /** Open sockets in the order they came (a Set keeps insertion order): the first idle one is the oldest. */
  private readonly open = new Set<Socket>();
  private readonly busy = new Map<Socket, number>();
  private readonly byAddress = new Map<string, number>();

  private readonly cap: number;
  /** Most connections one remote address may hold; 0: no share. */
  private readonly perAddress: number;

  constructor(cap: number, perAddress: number) {
    this.cap = cap;
    this.perAddress = perAddress;
  }

  get size(): number {
    return this.open.size;
  }

  /** Takes a new connection, closing an idle one to make room when needed; the refusal when none can go. */
  admit(socket: Socket): SlotRefusal | undefined {
    const address = socket.remoteAddress ?? '';
    const held = this.byAddress.get(address) ?? 0;
    if (this.perAddress > 0 && held >= this.perAddress && !this.evictIdle(address)) return 'address_share';
    if (this.open.size >= this.cap && !this.evictIdle(undefined)) return 'connection_cap';
    this.open.add(socket);
    this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    socket.once('close', () => {
      if (!this.open.delete(socket)) return;
      this.busy.delete(socket);
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    });
    return undefined;
  }

  /** A request or stream started on the socket; `release` when it is over. */
  hold(socket: Socket): () => void {
    this.busy.set(socket, (this.busy.get(socket) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.busy.get(socket) ?? 1) - 1;
      if (left > 0) this.busy.set(socket, left);
      else this.busy.delete(socket);
    };
  }

  /** Closes the oldest idle connection (of the address, when given); false when every one is busy. */
  private evictIdle(address: string | undefined): boolean {
    for (const socket of this.open) {
      if (this.busy.has(socket)) continue;
      if (address !== undefined && (socket.remoteAddress ?? '') !== address) continue;
      // Forgotten now, not at its 'close' event: the new connection takes its place at once.
      this.open.delete(socket);
      const left = (this.byAddress.get(socket.remoteAddress ?? '') ?? 1) - 1;
      if (left > 0) this.byAddress.set(socket.remoteAddress ?? '', left);
      else this.byAddress.delete(socket.remoteAddress ?? '');
      socket.destroy();
      return true;
    }
    return false;
  }
}

/**
 * The share of one remote address: `configured` (GW_MAX_CONNECTIONS_PER_ADDRESS; 0 turns it off), else nine
 * tenths of the cap, so one address (a client, or a load balancer all traffic comes through) can use nearly all
 * of it and the last tenth stays for others (a kubelet's probe of `/health`).
 */
export function addressShare(cap: number, configured: number | undefined): number {
  if (configured === 0) return 0;
  if (configured !== undefined) return Math.min(configured, cap);
  return Math.max(1, Math.floor(cap * 0.9));
}
