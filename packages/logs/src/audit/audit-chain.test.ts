import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuditChainCheck, auditHash, canonicalJson, GENESIS_HASH, sealAuditRecord } from './audit-chain.ts';
import { type AuditRecord, auditEventSchema } from './audit-record.ts';

const event = (requestId: string) =>
  auditEventSchema.parse({
    actor: 'bootstrap',
    action: 'create',
    target: 'POST /api/x',
    status: 201,
    request_id: requestId,
  });

/** A chain of n records as a store would seal them. */
function chain(length: number): AuditRecord[] {
  const records: AuditRecord[] = [];
  for (let seq = 1; seq <= length; seq += 1) {
    const prevHash = records.at(-1)?.hash ?? GENESIS_HASH;
    records.push(sealAuditRecord(event(`r${seq}`), { seq, time: 1_700_000_000_000 + seq, prevHash }));
  }
  return records;
}

function check(records: unknown[]) {
  const checker = new AuditChainCheck();
  for (const record of records) {
    const broken = checker.nextValue(record);
    if (broken) return broken;
  }
  return checker.result();
}

describe('canonical JSON (RFC 8785 for the values a record holds)', () => {
  it('sorts members by name at every depth, without whitespace, numbers and strings as JSON.stringify writes them', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: true }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}',
    );
    expect(canonicalJson({ '\u00e9': 1, e: 2, E: 3, '10': 4, '9': 5 })).toBe(
      '{"10":4,"9":5,"E":3,"e":2,"é":1}',
    );
    expect(canonicalJson([1e21, 0.1, -0, 1.5e-7, 'quote " \\ \n \u0001'])).toBe(
      '[1e+21,0.1,0,1.5e-7,"quote \\" \\\\ \\n \\u0001"]',
    );
    expect(canonicalJson({ gone: undefined, kept: null })).toBe('{"kept":null}');
  });

  it('hashes a record as SHA-256 of the canonical form of every field but hash', () => {
    const [record] = chain(1);
    const { hash, ...fields } = record!;
    const expected = createHash('sha256')
      .update(
        '{"action":"create","actor":"bootstrap","after":null,"before":null,"detail":null,' +
          `"prev_hash":"${GENESIS_HASH}","request_id":"r1","role":null,"seq":1,"source":null,"status":201,` +
          '"target":"POST /api/x","time":1700000000001}',
      )
      .digest('hex');
    expect(auditHash(fields)).toBe(expected);
    expect(hash).toBe(expected);
  });
});

describe('AuditChainCheck', () => {
  it('accepts an intact chain, and an empty one, with its count and head', () => {
    const records = chain(4);
    expect(check(records)).toEqual({ ok: true, records: 4, head: records[3]!.hash });
    expect(check([])).toEqual({ ok: true, records: 0, head: GENESIS_HASH });
  });

  it('names the first broken record: edited, missing, unlinked, out of order, malformed', () => {
    const records = chain(5);
    expect(
      check(records.map((record) => (record.seq === 3 ? { ...record, actor: 'someone' } : record))),
    ).toMatchObject({ ok: false, seq: 3, reason: 'edited', records: 2 });
    expect(check(records.filter((record) => record.seq !== 2))).toMatchObject({
      ok: false,
      seq: 2,
      reason: 'missing',
      message: 'record 2 is missing: the next record is 3',
    });
    expect(check(records.slice(3))).toMatchObject({
      seq: 1,
      reason: 'missing',
      message: 'record 1 is missing: the next record is 4 (3 records missing)',
    });
    // Record 3 replaced by one sealed anew after record 1: its own hash is right, its link is not.
    const forged = sealAuditRecord(event('forged'), {
      seq: 3,
      time: records[2]!.time,
      prevHash: records[0]!.hash,
    });
    expect(check([...records.slice(0, 2), forged, ...records.slice(3)])).toMatchObject({
      seq: 3,
      reason: 'unlinked',
    });
    expect(check([records[0], records[1], records[1], records[2]])).toMatchObject({
      seq: 2,
      reason: 'out_of_order',
      message: 'record 2 comes after record 2',
    });
    expect(check([records[0], { ...records[1], status: 'ok' }])).toMatchObject({
      seq: 2,
      reason: 'malformed',
      message: expect.stringContaining('status'),
    });
    expect(check([records[0], 'not a record'])).toMatchObject({ seq: 2, reason: 'malformed' });
  });
});
