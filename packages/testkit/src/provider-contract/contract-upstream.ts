import type { ServerResponse } from 'node:http';
import { setImmediate as nextTick, setTimeout as sleep } from 'node:timers/promises';
import { drained } from '@gw/shared';
import { type FakeUpstream, type FakeUpstreamRequest, startFakeUpstream } from '../fake-upstream.ts';
import { scaled } from '../time-scale.ts';
import type { RecordedUpstreamRequest, UpstreamAnswer, UpstreamStreamAnswer } from './contract-options.ts';

// Ceilings on an idle machine, each stretched by the time scale where it is used.
/** How long a gradual stream waits for the adapter to deliver its first chunk. */
const GRADUAL_WAIT_MS = 2_000;
/** How long a gradual stream waits after each entry for a chunk before it writes the next one unasked. */
const ENTRY_PAUSE_MS = 250;
/** How fast an aborted stream must end, and the fake must see its response closed. */
export const CANCEL_WAIT_MS = 2_000;
/** Piece sizes of split stream writes: small and uneven, so splits land inside characters, lines and frames. */
const PIECE_SIZES = [1, 3, 7, 2, 5, 4, 6];

export type StreamMode =
  | { kind: 'split' }
  /**
   * Writes entry after entry, each whole, pausing after each until the test releases it (or a short pause
   * passes, for entries such as Azure's prompt-filter preamble that yield no chunk); once released, writes
   * the rest split, or hangs.
   */
  | {
      kind: 'gradual';
      release: Promise<void>;
      after: 'finish' | 'hang';
      onReleased: (early: boolean) => void;
    };

function parseJsonOr(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes;
  }
}

/** The JSON an answer carries, or undefined when its body is not JSON. */
export function answerJson(answer: UpstreamAnswer): unknown {
  if (typeof answer.body === 'string' || Buffer.isBuffer(answer.body)) {
    const parsed = parseJsonOr(Buffer.from(answer.body));
    return Buffer.isBuffer(parsed) ? undefined : parsed;
  }
  return answer.body;
}

export function writeAnswer(response: ServerResponse, answer: UpstreamAnswer, defaultStatus: number): void {
  const isRaw = typeof answer.body === 'string' || Buffer.isBuffer(answer.body);
  const payload = isRaw ? (answer.body as string | Buffer) : JSON.stringify(answer.body);
  const contentType = answerJson(answer) === undefined ? 'text/plain; charset=utf-8' : 'application/json';
  response.writeHead(answer.status ?? defaultStatus, { 'content-type': contentType, ...answer.headers });
  response.end(payload);
}

async function writePiece(response: ServerResponse, piece: Buffer): Promise<boolean> {
  if (response.destroyed) return false;
  if (!response.write(piece)) await drained(response);
  // A tick between writes lets each piece leave as its own packet.
  await nextTick();
  return !response.destroyed;
}

async function writeSplit(response: ServerResponse, bytes: Buffer): Promise<boolean> {
  let offset = 0;
  for (let piece = 0; offset < bytes.length; piece++) {
    const size = PIECE_SIZES[piece % PIECE_SIZES.length]!;
    if (!(await writePiece(response, bytes.subarray(offset, offset + size)))) return false;
    offset += size;
  }
  return true;
}

export async function writeStream(response: ServerResponse, answer: UpstreamStreamAnswer, mode: StreamMode) {
  response.socket?.setNoDelay(true);
  response.writeHead(answer.status ?? 200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    ...answer.headers,
  });
  response.flushHeaders();
  const entries = answer.chunks.map((chunk) => Buffer.from(chunk));
  if (mode.kind === 'split') {
    if (await writeSplit(response, Buffer.concat(entries))) response.end();
    return;
  }
  let released = false;
  void mode.release.then(() => {
    released = true;
  });
  let written = 0;
  const deadline = Date.now() + scaled(GRADUAL_WAIT_MS);
  while (written < entries.length && !released) {
    if (!(await writePiece(response, entries[written]!))) return;
    written++;
    const pause = written === entries.length ? deadline - Date.now() : scaled(ENTRY_PAUSE_MS);
    await Promise.race([mode.release, sleep(Math.max(0, pause))]);
  }
  // Released while entries were still unwritten: the adapter delivered a chunk before the upstream ended.
  mode.onReleased(released && written < entries.length);
  if (mode.after === 'hang') return;
  if (await writeSplit(response, Buffer.concat(entries.slice(written)))) response.end();
}

/** A gradual stream mode, released by the test once it holds a chunk. */
export function gradualStream(after: 'finish' | 'hang') {
  let release: () => void = () => {};
  let settle: (early: boolean) => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const outcome = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  const mode: StreamMode = { kind: 'gradual', release: released, after, onReleased: settle };
  return { mode, release, outcome };
}

type Handler = (request: RecordedUpstreamRequest, response: ServerResponse) => Promise<void>;

/** The suite's upstream: the one recorder of testkit, answering with the scenario the current case set. */
export interface ContractUpstream {
  url: string;
  requests: RecordedUpstreamRequest[];
  /** Resolves when a response of the current scenario is closed before it finished (the client went away). */
  abandoned: Promise<void>;
  setHandler(handler: Handler): void;
  close(): Promise<void>;
}

export async function startContractUpstream(): Promise<ContractUpstream> {
  let handler: Handler | undefined;
  const requests: RecordedUpstreamRequest[] = [];
  const record = (request: FakeUpstreamRequest): RecordedUpstreamRequest => {
    const recorded = { ...request, body: parseJsonOr(request.raw), rawBody: request.raw };
    requests.push(recorded);
    return recorded;
  };
  // One route for every path: each case's scenario decides the answer, whatever the adapter asks.
  const fake: FakeUpstream = await startFakeUpstream([
    {
      path: /./,
      answer: (request) => {
        const recorded = record(request);
        return {
          respond: async (response) => {
            if (!handler) {
              response.writeHead(500).end('no scenario set');
              return;
            }
            await handler(recorded, response);
          },
        };
      },
    },
  ]);
  const upstream: ContractUpstream = {
    url: fake.url,
    requests,
    abandoned: Promise.resolve(),
    setHandler(next) {
      handler = next;
      requests.length = 0;
      upstream.abandoned = fake.waitForAborted(fake.abortedCount);
    },
    close: fake.close,
  };
  return upstream;
}
