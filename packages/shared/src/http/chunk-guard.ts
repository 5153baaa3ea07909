import type { Socket } from 'node:net';

/**
 * The largest chunk a chunked HTTP/1.1 body may announce (4 GiB): far above any body gw takes, far below the
 * 2^64 - 1 Node's parser accepts and then waits for until the request timeout.
 */
export const MAX_CHUNK_BYTES = 2 ** 32;

/** Headers end within this many bytes or Node's parser refuses them (and the guard stops following). */
const MAX_HEAD_BYTES = 64 * 1024;

const HEAD_END = Buffer.from('\r\n\r\n');
const LINE_END = Buffer.from('\r\n');

type State =
  | { at: 'head'; held: Buffer }
  | { at: 'body'; left: number }
  | { at: 'size'; held: Buffer }
  | { at: 'data'; left: number }
  | { at: 'trailers'; held: Buffer }
  | { at: 'off' };

/** What the head of a request says about its body: chunked, a length, or (an upgrade) stop following. */
function bodyOf(head: string): State {
  const lines = head.toLowerCase().split('\r\n');
  let length = 0;
  let chunked = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name === 'transfer-encoding') chunked = value.split(',').at(-1)?.trim() === 'chunked';
    else if (name === 'content-length') length = Number(value);
    else if (name === 'upgrade' || lines[0]?.startsWith('connect ')) return { at: 'off' };
  }
  if (chunked) return { at: 'size', held: Buffer.alloc(0) };
  return Number.isSafeInteger(length) && length > 0
    ? { at: 'body', left: length }
    : { at: 'head', held: Buffer.alloc(0) };
}

/**
 * Follows the framing of an HTTP/1.1 connection's requests beside Node's parser (which never says how large a
 * chunk was announced), and calls `refuse` when a chunk announces more than MAX_CHUNK_BYTES: Node would wait
 * for those bytes until the request timeout, holding the socket. Bodies cost a subtraction per packet; only
 * heads and chunk-size lines are looked at. Stops following at an upgrade or a head it cannot find.
 */
export function guardChunkSizes(socket: Socket, refuse: (socket: Socket) => void): void {
  let state: State = { at: 'head', held: Buffer.alloc(0) };
  const onData = (packet: Buffer) => {
    let data = packet;
    while (data.length > 0) {
      if (state.at === 'off') {
        socket.off('data', onData);
        return;
      }
      if (state.at === 'body' || state.at === 'data') {
        const taken = Math.min(state.left, data.length);
        data = data.subarray(taken);
        state.left -= taken;
        // A chunk's data ends with CRLF: the next size line starts after it (an empty line first).
        if (state.left === 0) {
          state =
            state.at === 'body'
              ? { at: 'head', held: Buffer.alloc(0) }
              : { at: 'size', held: Buffer.alloc(0) };
        }
        continue;
      }
      const held: Buffer = Buffer.concat([state.held, data]);
      const terminator = state.at === 'head' ? HEAD_END : LINE_END;
      const end = held.indexOf(terminator);
      if (end === -1) {
        if (held.length > MAX_HEAD_BYTES) state = { at: 'off' };
        else state.held = held;
        return;
      }
      data = held.subarray(end + terminator.length);
      const text = held.subarray(0, end).toString('latin1');
      if (state.at === 'head') {
        // Blank lines between requests are allowed (RFC 9112 §2.2).
        state = text.trim() === '' ? { at: 'head', held: Buffer.alloc(0) } : bodyOf(text);
      } else if (state.at === 'trailers') {
        state =
          text === '' ? { at: 'head', held: Buffer.alloc(0) } : { at: 'trailers', held: Buffer.alloc(0) };
      } else {
        const digits = text.split(';')[0]!.trim();
        if (digits === '') continue; // the CRLF that ends a chunk's data
        const size = digits.length > 13 ? Number.POSITIVE_INFINITY : Number.parseInt(digits, 16);
        if (Number.isNaN(size)) {
          state = { at: 'off' }; // Node's parser refuses it with a 400 itself
        } else if (size > MAX_CHUNK_BYTES) {
          socket.off('data', onData);
          refuse(socket);
          return;
        } else state = size === 0 ? { at: 'trailers', held: Buffer.alloc(0) } : { at: 'data', left: size };
      }
    }
  };
  socket.on('data', onData);
}
