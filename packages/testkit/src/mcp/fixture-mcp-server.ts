// A small stdio MCP server for failure tests: a tool that crashes the process mid-call, one that never
// answers, one that fails (isError), one that reports the environment it received, one that adds a tool
// (the server then sends notifications/tools/list_changed).
import { appendFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer(
  { name: 'gw-fixture', version: '1.0.0' },
  { capabilities: { tools: { listChanged: true } } },
);
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

server.registerTool('ok', { description: 'Answers ok' }, async () => text('ok'));
server.registerTool('pid', { description: 'The server process id' }, async () => text(String(process.pid)));
server.registerTool(
  'env',
  { description: 'Names of the environment variables the server received' },
  async () => text(JSON.stringify(Object.keys(process.env).sort())),
);
server.registerTool(
  'sleep',
  {
    description: 'Answers after ms milliseconds; appends a line to startedFile (if given) as it starts',
    inputSchema: { ms: z.number().int().min(0), startedFile: z.string().optional() },
  },
  async ({ ms, startedFile }) => {
    // The file lets a test wait until calls hold their run slots, which nothing else outside the runner shows.
    if (startedFile) await appendFile(startedFile, `started ${process.pid}\n`);
    // The slowness is the behaviour under test (calls that hold a run slot), not a synchronization.
    await sleep(ms);
    return text(`slept ${ms}`);
  },
);
server.registerTool('hang', { description: 'Never answers' }, () => new Promise(() => {}));
server.registerTool('crash', { description: 'Exits the server process during the call' }, async () => {
  process.exit(3);
});
server.registerTool('fail', { description: 'A tool failure' }, async () => ({
  ...text('it failed on purpose'),
  isError: true,
}));
server.registerTool(
  'add-tool',
  { description: 'Registers a new tool', inputSchema: { name: z.string().min(1) } },
  async ({ name }) => {
    server.registerTool(name, { description: `added at run time` }, async () => text(`I am ${name}`));
    return text(`added ${name}`);
  },
);

await server.connect(new StdioServerTransport());
