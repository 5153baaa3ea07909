/**
 * Writes README.md's table of error types from ERROR_CATALOG (packages/shared/src/errors/gateway-error.ts),
 * so the document cannot drift from the code (test/error-table.test.ts checks).
 *
 *   node scripts/error-table.ts [--write]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERROR_CATALOG } from '@gw/shared';

const START = '<!-- error-types:start -->';
const END = '<!-- error-types:end -->';
export const README = fileURLToPath(new URL('../README.md', import.meta.url));

export function renderErrorTable(): string {
  const rows = Object.entries(ERROR_CATALOG).map(
    ([type, { status, meaning }]) => `| \`${type}\` | ${status} | ${meaning} |`,
  );
  return ['| `error.type` | status | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The generated block of a document (between the markers), without the markers. */
export function readErrorBlock(document: string): string {
  const start = document.indexOf(START);
  const end = document.indexOf(END);
  if (start === -1 || end < start) throw new Error(`README.md has no ${START} … ${END} block`);
  return document.slice(start + START.length, end).trim();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const table = renderErrorTable();
  if (process.argv.includes('--write')) {
    const document = readFileSync(README, 'utf8');
    readErrorBlock(document);
    const start = document.indexOf(START) + START.length;
    writeFileSync(README, `${document.slice(0, start)}\n${table}\n${document.slice(document.indexOf(END))}`);
  } else {
    console.log(table);
  }
}
