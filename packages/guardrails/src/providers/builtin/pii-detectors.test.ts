import type { PiiEntity } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { findPii, passesIbanChecksum, passesLuhn } from './pii-detectors.ts';

const ALL = new Set<PiiEntity>(['email', 'phone', 'card', 'iban', 'secret']);
const found = (text: string, entities: ReadonlySet<PiiEntity> = ALL) =>
  findPii(text, entities).map((match) => [match.entity, text.slice(match.start, match.end)]);

describe('PII detectors', () => {
  it('checks card numbers with Luhn', () => {
    expect(passesLuhn('4111111111111111')).toBe(true);
    expect(passesLuhn('4111111111111112')).toBe(false);
    expect(passesLuhn('79927398713')).toBe(true);
    expect(passesLuhn('')).toBe(false);
    expect(passesLuhn('4111-1111')).toBe(false);
  });

  it('finds cards written with spaces or dashes, not digit runs that fail Luhn or are too long', () => {
    expect(found('pay with 4111 1111 1111 1111 please')).toEqual([['card', '4111 1111 1111 1111']]);
    expect(found('amex 3782-822463-10005.')).toEqual([['card', '3782-822463-10005']]);
    expect(found('order 4111111111111112 shipped', new Set(['card']))).toEqual([]);
    expect(found('id 41111111111111110000000', new Set(['card']))).toEqual([]);
  });

  it('checks IBANs with mod-97, with or without spaces, and stops at the next word', () => {
    expect(passesIbanChecksum('DE89370400440532013000')).toBe(true);
    expect(passesIbanChecksum('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(passesIbanChecksum('DE88370400440532013000')).toBe(false);
    expect(passesIbanChecksum('GB82WEST12345698765432')).toBe(true);
    expect(passesIbanChecksum('GB82')).toBe(false);
    expect(found('IBAN: GB82 WEST 1234 5698 7654 32 THANKS')).toEqual([
      ['iban', 'GB82 WEST 1234 5698 7654 32'],
    ]);
    expect(found('wire to DE89370400440532013000.')).toEqual([['iban', 'DE89370400440532013000']]);
    expect(found('wire to DE88370400440532013000.', new Set(['iban']))).toEqual([]);
  });

  it('finds e-mail addresses without the sentence around them', () => {
    expect(found('Mail jane.doe+news@mail.example.co.uk.')).toEqual([
      ['email', 'jane.doe+news@mail.example.co.uk'],
    ]);
    expect(found('user@localhost and @handle and a@b')).toEqual([]);
  });

  it('finds phone numbers, not dates, times or short numbers', () => {
    expect(found('call +44 20 7946 0958 or (555) 123-4567')).toEqual([
      ['phone', '+44 20 7946 0958'],
      ['phone', '(555) 123-4567'],
    ]);
    expect(found('on 2024-01-15 at 10:30, 3 items, room 1234')).toEqual([]);
  });

  it('finds keys and tokens by their shapes', () => {
    const text = `key sk-proj-${'a'.repeat(24)} and AKIA${'B'.repeat(16)} and ghp_${'c'.repeat(36)}`;
    expect(found(text).map(([entity]) => entity)).toEqual(['secret', 'secret', 'secret']);
  });

  it('reports each value once, the most specific kind winning', () => {
    expect(found('4111111111111111')).toEqual([['card', '4111111111111111']]);
  });
});

describe('secrets inside URLs', () => {
  it('finds a URL password and credential query parameters, wherever the URL sits', () => {
    const text =
      'see https://user:hunter2secret@db.example.com/x and https://api.example.com/v1?api_key=abc123xyz&page=2';
    expect(found(text, new Set(['secret']))).toEqual([
      ['secret', 'hunter2secret'],
      ['secret', 'abc123xyz'],
    ]);
  });
});
