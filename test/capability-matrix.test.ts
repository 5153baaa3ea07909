import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import {
  PROVIDERS_DOC,
  readMatrixBlock,
  renderCapabilityMatrix,
  tableCells,
} from '../scripts/capability-matrix.ts';

it('docs/providers.md shows the capabilities the adapters declare (node scripts/capability-matrix.ts --write)', () => {
  const documented = readMatrixBlock(readFileSync(PROVIDERS_DOC, 'utf8'));
  expect(tableCells(documented)).toEqual(tableCells(renderCapabilityMatrix()));
});
