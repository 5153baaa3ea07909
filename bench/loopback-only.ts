// Preloaded into a peer gateway (`node --import bench/loopback-only.ts …`) that listens on every interface and has
// no option to choose: a server given a port and no host listens on 127.0.0.1 instead. Portkey's start-server.js
// calls @hono/node-server's serve() without a hostname, which would put an open proxy (any custom host) on the
// machine's network for the length of the run.
import { Server } from 'node:net';

const listen = Server.prototype.listen;
Server.prototype.listen = function listenOnLoopback(this: Server, ...args: unknown[]) {
  if (typeof args[0] === 'number' && (args[1] === undefined || typeof args[1] === 'function')) {
    args.splice(1, args[1] === undefined ? 1 : 0, '127.0.0.1');
  }
  return (listen as (...all: unknown[]) => Server).apply(this, args);
};
