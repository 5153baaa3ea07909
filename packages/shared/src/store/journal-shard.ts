/**
 * Shards of the journal of reservations, each its own slot (`{res:<n>}`): a reservation is in the shard its id
 * hashes to, and the sweeper reads every shard. 64 fall evenly on the masters of a Redis Cluster (16 fell 5/4/7
 * on three, and the journal is most of governance's commands: `pnpm bench:shards`).
 */
export const JOURNAL_SHARDS = 64;

/**
 * The shards of the journal of releases before 2026-12-03 (by the SHA-1 of the id): their open reservations move
 * to the shard `journalShard` gives on upgrade (redis-migration.ts `reshardJournal`), so no earlier hash is kept.
 */
export const OLD_JOURNAL_SHARDS = 16;

/**
 * The shard of the journal a reservation is in: the 32-bit FNV-1a of its id's UTF-16 code units, its high half
 * folded into the low one (the low bits of FNV-1a depend on the low bits of each character only), modulo the
 * shard count. Ids are gw's own, so no cryptographic hash is needed; a governed request hashes its id at its record
 * and at its settle, and OpenSSL's SHA-1 cost more to call than to run (4 % of a governed cluster ingress's busy
 * time in a profile).
 */
export function journalShard(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) {
    hash ^= id.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return ((hash ^ (hash >>> 16)) >>> 0) % JOURNAL_SHARDS;
}
