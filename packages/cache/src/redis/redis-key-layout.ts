/** The names of the cache's keys and channel under a prefix (docs/cache.md "Redis layout"). */
export interface CacheKeyLayout {
  /** The set of every scope's tag, read by a replica's fill. */
  scopes: string;
  /** The channel of the replicas' notices. */
  channel: string;
  /** The keys of one scope. */
  scope(scope: string): ScopeKeys;
  /** The keys of one scope, by its tag (as the scopes set holds it). */
  scopeOfTag(tag: string): ScopeKeys;
}

export interface ScopeKeys {
  /** The scope as its hash tag holds it (URI-encoded, so no `{` or `}` can end the tag early). */
  tag: string;
  /** HASH entry id → hash. */
  ids: string;
  /** ZSET entry ids by createdAt. */
  order: string;
  /** What every entry key of the scope starts with. */
  entryPrefix: string;
  /** The entry key of a hash: the entry's JSON. */
  entry(hash: string): string;
}

export function cacheKeyLayout(prefix: string): CacheKeyLayout {
  // Every key of a scope carries its hash tag, so the scope's scripts run on one Redis Cluster node.
  const scopeOfTag = (tag: string): ScopeKeys => {
    const base = `${prefix}cache:{${tag}}:`;
    return {
      tag,
      ids: `${base}ids`,
      order: `${base}order`,
      entryPrefix: `${base}h:`,
      entry: (hash) => `${base}h:${hash}`,
    };
  };
  return {
    scopes: `${prefix}cache:scopes`,
    channel: `${prefix}cache:changes`,
    scope: (scope) => scopeOfTag(encodeURIComponent(scope)),
    scopeOfTag,
  };
}
