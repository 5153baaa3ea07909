import { loadService } from '@gw/shared/grpc';

/** The Router service of proto/router.proto (loaded on first use). */
export const routerGrpcService = () => loadService('router', 'Router');

/** One frame of the Passthrough RPC: `head` on the first frame of each direction, `chunk` on the others. */
export interface PassthroughFrame {
  head: Buffer;
  chunk: Buffer;
}

/** Writes a frame, waiting for the drain of a full buffer (back-pressure) or the end of the call. */
export async function writeFrame(
  stream: {
    write(frame: unknown): boolean;
    once(event: string, listener: () => void): unknown;
    off(event: string, listener: () => void): unknown;
  },
  frame: Partial<PassthroughFrame>,
): Promise<void> {
  if (stream.write(frame)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      for (const event of ['drain', 'close', 'error']) stream.off(event, done);
      resolve();
    };
    for (const event of ['drain', 'close', 'error']) stream.once(event, done);
  });
}
