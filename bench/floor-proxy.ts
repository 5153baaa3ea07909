// The floor of `pnpm bench`: the least a Node gateway can do for a chat completion, written for the bench and
// never shipped. A node:http server; the JSON body parsed and its model rewritten (`openai/gpt-4o-mini` →
// `gpt-4o-mini`); undici to the upstream over a keep-alive pool; a whole answer parsed and written back; a stream
// relayed chunk by chunk as it comes. No validation, routing, accounting, logs or metrics: what is left of a
// gw request's cost above this row is gw's own work (issue 43).
//
//   node bench/floor-proxy.ts --port=PORT --upstream=http://127.0.0.1:MOCK
import { createServer, type IncomingMessage } from 'node:http';
import { Pool } from 'undici';

function flag(name: string): string {
  const prefix = `--${name}=`;
  const value = process.argv.find((argument) => argument.startsWith(prefix))?.slice(prefix.length);
  if (!value) throw new Error(`floor-proxy: --${name}= is required`);
  return value;
}

const port = Number(flag('port'));
const upstream = new Pool(flag('upstream'), { connections: 128, pipelining: 1 });

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const server = createServer(async (request, response) => {
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  try {
    const body = JSON.parse(await readBody(request)) as { model: string; stream?: boolean };
    body.model = body.model.slice(body.model.indexOf('/') + 1);
    const answer = await upstream.request({
      method: 'POST',
      path: request.url ?? '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' },
      body: JSON.stringify(body),
    });
    if (body.stream) {
      response.writeHead(answer.statusCode, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
      });
      for await (const chunk of answer.body) response.write(chunk);
      response.end();
      return;
    }
    const json = await answer.body.json();
    response.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(JSON.stringify(json));
  } catch (error) {
    if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message: (error as Error).message } }));
  }
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');

process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void upstream.close().then(() => process.exit(0));
});
