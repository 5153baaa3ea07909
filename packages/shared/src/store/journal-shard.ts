import { hash } from 'node:crypto';

/**
 * Shards of the journal of reservations, each its own slot (`{res:<n>}`): a reservation is in the shard its id
 * hashes to, and the sweeper reads every shard.
 */
export const JOURNAL_SHARDS = 16;

/**
 * The shard of the journal a reservation is in: the first 32 bits of the SHA-1 of its id, modulo the shard
 * count. Fixed by what earlier releases stored: a reservation is found in the shard it was recorded in.
 */
export function journalShard(id: string): number {
  // Computed once per store call (the caller passes it on to each key it builds).
  return (sha1FirstWord(id) ?? hash('sha1', id, 'buffer').readUInt32BE(0)) % JOURNAL_SHARDS;
}

// A governed request's id is hashed at its record and again at its settle. OpenSSL's SHA-1 costs more to call
// than to run on ids this short (4% of a governed cluster ingress's busy time in a profile, `hash` included);
// an id that fits one SHA-1 block (55 bytes of UTF-8, a `res_<uuid>` has 40) is hashed here instead.

/** The most UTF-8 bytes one SHA-1 block holds with its padding (a 0x80 byte and the 8-byte length). */
const ONE_BLOCK_BYTES = 55;
const block = new Uint8Array(64);
const schedule = new Int32Array(80);
const encoder = new TextEncoder();

/** The first 32-bit word of the SHA-1 (FIPS 180-4) of `text`'s UTF-8; undefined when it needs two blocks. */
export function sha1FirstWord(text: string): number | undefined {
  block.fill(0);
  const { read, written } = encoder.encodeInto(text, block);
  if (read !== text.length || written > ONE_BLOCK_BYTES) return undefined;
  block[written] = 0x80;
  const bits = written * 8;
  block[62] = bits >>> 8;
  block[63] = bits & 0xff;
  for (let word = 0; word < 16; word++) {
    const at = word * 4;
    schedule[word] = (block[at]! << 24) | (block[at + 1]! << 16) | (block[at + 2]! << 8) | block[at + 3]!;
  }
  for (let word = 16; word < 80; word++) {
    const mixed = schedule[word - 3]! ^ schedule[word - 8]! ^ schedule[word - 14]! ^ schedule[word - 16]!;
    schedule[word] = (mixed << 1) | (mixed >>> 31);
  }
  let a = 0x67452301;
  let b = 0xefcdab89 | 0;
  let c = 0x98badcfe | 0;
  let d = 0x10325476;
  let e = 0xc3d2e1f0 | 0;
  for (let round = 0; round < 80; round++) {
    let mix: number;
    let constant: number;
    if (round < 20) {
      mix = (b & c) | (~b & d);
      constant = 0x5a827999;
    } else if (round < 40) {
      mix = b ^ c ^ d;
      constant = 0x6ed9eba1;
    } else if (round < 60) {
      mix = (b & c) | (b & d) | (c & d);
      constant = 0x8f1bbcdc | 0;
    } else {
      mix = b ^ c ^ d;
      constant = 0xca62c1d6 | 0;
    }
    const next = (((a << 5) | (a >>> 27)) + mix + e + constant + schedule[round]!) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = next;
  }
  return (a + 0x67452301) >>> 0;
}
