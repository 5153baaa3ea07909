/**
 * Prints what each built-in provider can do, as a Markdown table generated from the adapters' declared
 * capabilities (services/router/src/core/providers/registry.ts). With `--write` it refreshes the table in
 * docs/providers.md, so the document cannot drift from the code (test/capability-matrix.test.ts checks).
 *
 *   node scripts/capability-matrix.ts [--write]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Operation, PROVIDER_NAMES } from '@gw/shared';
import type { Capabilities } from '../services/router/src/core/providers/adapter.ts';
import type { ProviderEntry } from '../services/router/src/core/providers/provider-entry.ts';
import { BUILT_IN_PROVIDERS } from '../services/router/src/core/providers/registry.ts';

const MATRIX_START = '<!-- capability-matrix:start -->';
const MATRIX_END = '<!-- capability-matrix:end -->';
export const PROVIDERS_DOC = fileURLToPath(new URL('../docs/providers.md', import.meta.url));

const COLUMNS: Array<{ title: string; has: (capabilities: Capabilities) => boolean }> = [
  ...(
    [
      ['chat', 'chat'],
      ['chat stream', 'chat_stream'],
      ['text', 'text'],
      ['text stream', 'text_stream'],
      ['embeddings', 'embeddings'],
    ] as Array<[string, Operation]>
  ).map(([title, operation]) => ({
    title,
    has: (capabilities: Capabilities) => capabilities.operations.includes(operation),
  })),
  { title: 'tools', has: (capabilities) => capabilities.tools },
  { title: 'vision', has: (capabilities) => capabilities.vision },
  { title: 'text via chat', has: (capabilities) => capabilities.textViaChat },
  { title: 'auth optional', has: (capabilities) => capabilities.authOptional },
];

/** The table, one row per wired provider in the order of PROVIDER_NAMES, laid out as biome formats it. */
export function renderCapabilityMatrix(
  providers: Partial<Record<string, ProviderEntry>> = BUILT_IN_PROVIDERS,
): string {
  const header = ['provider', ...COLUMNS.map((column) => column.title)];
  const rows = PROVIDER_NAMES.flatMap((name) => {
    const entry = providers[name];
    if (!entry) return [];
    return [[name, ...COLUMNS.map((column) => (column.has(entry.adapter.capabilities) ? '✓' : '—'))]];
  });
  const widths = header.map((title, index) =>
    Math.max(3, title.length, ...rows.map((row) => row[index]!.length)),
  );
  // The provider column is left-aligned, the capability marks centred.
  const cell = (text: string, index: number) => {
    const padding = widths[index]! - text.length;
    if (index === 0) return text + ' '.repeat(padding);
    const left = Math.floor(padding / 2);
    return ' '.repeat(left) + text + ' '.repeat(padding - left);
  };
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const separator = widths.map((width, index) =>
    index === 0 ? '-'.repeat(width) : `:${'-'.repeat(width - 2)}:`,
  );
  return [line(header.map(cell)), line(separator), ...rows.map((row) => line(row.map(cell)))].join('\n');
}

/** The cells of a Markdown table without its separator row: what the table says, whatever its layout. */
export function tableCells(table: string): string[][] {
  return table
    .split('\n')
    .filter((row) => row.trim().startsWith('|') && !/^\|[\s:|-]+\|$/.test(row.trim()))
    .map((row) =>
      row
        .trim()
        .slice(1, -1)
        .split('|')
        .map((text) => text.trim()),
    );
}

/** The table currently between the markers of a document. */
export function readMatrixBlock(document: string): string {
  const start = document.indexOf(MATRIX_START);
  const end = document.indexOf(MATRIX_END);
  if (start === -1 || end < start) {
    throw new Error(`the document lacks the markers ${MATRIX_START} … ${MATRIX_END}`);
  }
  return document.slice(start + MATRIX_START.length, end).trim();
}

/** The document with the block between the markers replaced by the table. */
function replaceMatrixBlock(document: string, table: string): string {
  readMatrixBlock(document);
  const start = document.indexOf(MATRIX_START);
  const end = document.indexOf(MATRIX_END);
  return `${document.slice(0, start + MATRIX_START.length)}\n${table}\n${document.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const table = renderCapabilityMatrix();
  if (process.argv.includes('--write')) {
    writeFileSync(PROVIDERS_DOC, replaceMatrixBlock(readFileSync(PROVIDERS_DOC, 'utf8'), table));
    console.log(`updated ${PROVIDERS_DOC}`);
  } else {
    console.log(table);
  }
}
