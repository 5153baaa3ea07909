import { describe, expect, it } from 'vitest';
import { spendCsv } from './spend-admin.ts';

const figures = { requests: 1, input_tokens: 10, output_tokens: 5, cached_tokens: 0, cost: 0.000_375 };
const total = { ...figures };

describe('spendCsv', () => {
  it('writes a header named by the grouping, quotes what needs it and keeps formulas out of spreadsheets', () => {
    const csv = spendCsv({
      group_by: 'team',
      from: 0,
      to: 1,
      rows: [
        { group: 't1', name: 'plain', ...figures },
        { group: 't2', name: 'a, "b"\nc', ...figures },
        { group: 't3', name: '=HYPERLINK("x")', ...figures },
        { group: null, ...figures },
      ],
      total,
    });
    expect(csv.split('\r\n')).toEqual([
      'team,name,requests,input_tokens,output_tokens,cached_tokens,cost',
      't1,plain,1,10,5,0,0.000375',
      't2,"a, ""b""\nc",1,10,5,0,0.000375',
      `t3,"'=HYPERLINK(""x"")",1,10,5,0,0.000375`,
      ',,1,10,5,0,0.000375',
      '',
    ]);
  });
});
