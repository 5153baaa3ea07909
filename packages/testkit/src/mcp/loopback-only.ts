// Preloaded (`node --import`) into MCP servers that listen on every interface and offer no host option
// (server-everything): a listen() without a host binds 127.0.0.1 instead, so tests stay on loopback.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  const [first, second] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof second !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (first && typeof first === 'object' && !('path' in first) && !('host' in first)) {
    args[0] = { ...first, host: '127.0.0.1' };
  }
  return listen.apply(this, args as Parameters<typeof listen>);
} as typeof listen;
