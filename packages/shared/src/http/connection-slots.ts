import type { Socket } from 'node:net';

/** Why a new connection was refused: the cap is held by busy connections, or its address holds its share. */
export type SlotRefusal = 'connection_cap' | 'address_share';

/**
 * How a request body must keep coming: at least `bytes` in every `windowMs` until it is complete, or it is cut
 * (GW_BODY_PROGRESS_BYTES, GW_BODY_PROGRESS_MS).
 */
export interface BodyProgress {
  windowMs: number;
  bytes: number;
}

/** What the slots need to see of a request whose body is on its way. */
interface IncomingBody {
  /** True once the whole body has arrived. */
  readonly complete: boolean;
  /** Bytes that arrived but the handler has not read yet. */
  readonly readableLength: number;
}

interface Receiving {
  body: IncomingBody;
  /** The socket's `bytesRead` when the current window began, and when it began. */
  windowBytes: number;
  windowStart: number;
  /** The socket's `bytesRead` when it was last looked at. */
  seenBytes: number;
  /** Answers the request 408 and closes its connection (its body stalled). */
  cut: () => void;
}

/**
 * The connections a port holds, oldest first, and who holds them. A socket is busy while a request or stream
 * is in flight on it (or it was upgraded); otherwise it is idle: a connection that has not finished sending a
 * request's headers yet, or a keep-alive connection between requests. A busy socket whose request's body is
 * still arriving is also receiving. When the cap is reached, the oldest idle connection is closed to admit the
 * new one, then, when none is idle, the receiving connection that has gone longest without sending a byte:
 * neither idle sockets nor bodies that stopped (or trickle) can keep `/health` or a real request out; only a
 * cap held by requests being worked on refuses. An address at its share gives up its own oldest idle
 * connection in the same way, and is refused when all of its connections are busy.
 */
export class ConnectionSlots {
  /** Open sockets in the order they came (a Set keeps insertion order): the first idle one is the oldest. */
  private readonly open = new Set<Socket>();
  private readonly busy = new Map<Socket, number>();
  private readonly byAddress = new Map<string, number>();
  /**
   * Sockets whose request's body is arriving, in the order they were last seen to receive bytes (an entry
   * that progressed moves to the end): the first is the one that has gone longest without progress.
   */
  private readonly receiving = new Map<Socket, Receiving>();

  private readonly cap: number;
  /** Most connections one remote address may hold; 0: no share. */
  private readonly perAddress: number;
  private readonly progress: BodyProgress;
  /** When the last sweep ran: a sweep much later than due means this process stood still, not its clients. */
  private lastSweep = Date.now();
  /** Told about each request cut for its body: too slow (`sweep`), or stalled longest when room was needed. */
  private readonly onBodyCut: () => void;

  constructor(options: {
    cap: number;
    perAddress: number;
    progress: BodyProgress;
    onBodyCut?: () => void;
  }) {
    this.cap = options.cap;
    this.perAddress = options.perAddress;
    this.progress = options.progress;
    this.onBodyCut = options.onBodyCut ?? (() => {});
  }

  get size(): number {
    return this.open.size;
  }

  /** Takes a new connection, closing an idle or stalled one to make room when needed; the refusal when none can go. */
  admit(socket: Socket): SlotRefusal | undefined {
    const address = socket.remoteAddress ?? '';
    const held = this.byAddress.get(address) ?? 0;
    if (this.perAddress > 0 && held >= this.perAddress && !this.evictIdle(address)) return 'address_share';
    if (this.open.size >= this.cap && !this.evictIdle(undefined) && !this.evictStalled())
      return 'connection_cap';
    this.open.add(socket);
    this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    socket.once('close', () => {
      if (this.open.has(socket)) this.forget(socket);
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

  /**
   * A request on the socket (held: `hold`) whose body may still be arriving: until it is complete, it must
   * keep up `progress`, and it may be closed to make room at the cap. `cut` answers it 408 and closes it.
   */
  receive(socket: Socket, body: IncomingBody, cut: () => void): void {
    if (body.complete || !this.open.has(socket)) return;
    const now = Date.now();
    const bytes = socket.bytesRead;
    this.receiving.set(socket, { body, windowBytes: bytes, windowStart: now, seenBytes: bytes, cut });
  }

  /**
   * Looks at every body still arriving (the server calls it a few times a window): one complete leaves the
   * list, one that received bytes moves to its end, and one that received fewer than `progress.bytes` in a
   * whole window is cut. Bytes the handler has not read yet count as progress: then the server is the slow one.
   * So is a process whose event loop stood still for half a window since the last sweep: every window starts
   * again rather than charge its clients with the bytes it did not read meanwhile.
   */
  sweep(now = Date.now()): void {
    const progressed: Socket[] = [];
    const stalled: Receiving[] = [];
    const restart = now - this.lastSweep > this.progress.windowMs / 2;
    this.lastSweep = now;
    for (const [socket, entry] of this.receiving) {
      if (entry.body.complete) {
        this.receiving.delete(socket);
        continue;
      }
      const bytes = socket.bytesRead;
      const unread = entry.body.readableLength > 0;
      if (bytes !== entry.seenBytes || unread) {
        entry.seenBytes = bytes;
        progressed.push(socket);
      }
      if (!restart && now - entry.windowStart < this.progress.windowMs) continue;
      if (!restart && !unread && bytes - entry.windowBytes < this.progress.bytes) {
        this.receiving.delete(socket);
        stalled.push(entry);
        continue;
      }
      entry.windowStart = now;
      entry.windowBytes = bytes;
    }
    for (const socket of progressed) this.moveToEnd(socket);
    for (const entry of stalled) {
      this.onBodyCut();
      entry.cut();
    }
  }

  /** Closes the oldest idle connection (of the address, when given); false when every one is busy. */
  private evictIdle(address: string | undefined): boolean {
    for (const socket of this.open) {
      if (this.busy.has(socket)) continue;
      if (address !== undefined && (socket.remoteAddress ?? '') !== address) continue;
      this.evict(socket);
      return true;
    }
    return false;
  }

  /**
   * Closes the connection whose body has gone longest without a byte; false when no body is arriving. The
   * list's order is as of the last sweep: entries that received bytes since move to the end first.
   */
  private evictStalled(): boolean {
    const progressed: Socket[] = [];
    let chosen: Socket | undefined;
    for (const [socket, entry] of this.receiving) {
      if (entry.body.complete) continue;
      if (socket.bytesRead === entry.seenBytes) {
        chosen = socket;
        break;
      }
      entry.seenBytes = socket.bytesRead;
      progressed.push(socket);
    }
    for (const socket of progressed) this.moveToEnd(socket);
    // Every one received bytes since the last sweep: the one seen longest ago goes.
    chosen ??= progressed[0];
    if (chosen === undefined) return false;
    this.onBodyCut();
    this.evict(chosen);
    return true;
  }

  /** Closes a socket and forgets it now, not at its 'close' event: the new connection takes its place at once. */
  private evict(socket: Socket): void {
    this.forget(socket);
    socket.destroy();
  }

  private forget(socket: Socket): void {
    this.open.delete(socket);
    this.busy.delete(socket);
    this.receiving.delete(socket);
    const address = socket.remoteAddress ?? '';
    const left = (this.byAddress.get(address) ?? 1) - 1;
    if (left > 0) this.byAddress.set(address, left);
    else this.byAddress.delete(address);
  }

  private moveToEnd(socket: Socket): void {
    const entry = this.receiving.get(socket);
    if (!entry) return;
    this.receiving.delete(socket);
    this.receiving.set(socket, entry);
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
