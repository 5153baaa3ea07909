// bench/mock-upstream.ts on another address than loopback, for `pnpm bench:netns`: that mock listens on
// 127.0.0.1, which another network namespace cannot reach, so its listen call is pointed at MOCK_HOST (the
// address of the mock's own namespace) before the mock is loaded. Everything else is the mock unchanged.
import { Server } from 'node:net';

const host = process.env['MOCK_HOST'];
if (!host) throw new Error('MOCK_HOST is not set: the address the mock listens on');

const listen = Server.prototype.listen;
Server.prototype.listen = function (this: Server, ...args: unknown[]) {
  if (args[1] === '127.0.0.1') args[1] = host;
  return (listen as (...rest: unknown[]) => Server).apply(this, args);
} as typeof listen;

await import('./mock-upstream.ts');
