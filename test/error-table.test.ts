import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { README, readErrorBlock, renderErrorTable } from '../scripts/error-table.ts';

it('README.md lists every error type with its status (node scripts/error-table.ts --write)', () => {
  expect(readErrorBlock(readFileSync(README, 'utf8'))).toBe(renderErrorTable());
});
