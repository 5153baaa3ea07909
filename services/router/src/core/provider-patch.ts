import { GatewayError, isPlainObject, mergePatch, type ProviderConfig } from '@gw/shared';

function invalid(message: string, param: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', message, param });
}

/**
 * `PATCH /api/providers/{name}`: a JSON merge patch (RFC 7396) onto the stored config (so `network_config`,
 * its `extra_headers` and a key's `config` merge field by field, and `null` removes a field), except `keys`,
 * which merge by id: an entry whose `id` names a stored key is merged onto that key (a key whose `value` it
 * leaves out keeps its secret), `{"id": …, "$patch": "delete"}` removes one (the directive of Kubernetes'
 * strategic merge patch), any other entry is a new key; keys the patch does not name stay. The result is
 * validated whole by the caller, which also puts back a redacted value sent for a stored secret.
 */
export function patchProviderConfig(stored: ProviderConfig, patch: Record<string, unknown>): unknown {
  const { keys, ...rest } = patch;
  const merged = mergePatch(stored, rest) as Record<string, unknown>;
  if (keys === undefined) return merged;
  if (keys === null) return { ...merged, keys: [] };
  if (!Array.isArray(keys)) {
    throw invalid('keys: must be a list of keys, merged with the stored ones by id', 'keys');
  }
  return { ...merged, keys: mergeKeys(stored.keys, keys) };
}

function mergeKeys(stored: ProviderConfig['keys'], entries: unknown[]): unknown[] {
  const keys: unknown[] = [...stored];
  const idOf = (key: unknown) => (isPlainObject(key) ? key['id'] : undefined);
  for (const [index, entry] of entries.entries()) {
    if (!isPlainObject(entry)) throw invalid(`keys[${index}]: must be an object`, `keys[${index}]`);
    const { $patch: directive, ...fields } = entry;
    const id = fields['id'];
    const at = id === undefined ? -1 : keys.findIndex((key) => idOf(key) === id);
    if (directive === undefined) {
      if (at === -1) keys.push(fields);
      else keys[at] = mergePatch(keys[at], fields);
    } else if (directive === 'delete') {
      if (at === -1) {
        throw invalid(
          `keys[${index}].id: no key '${String(id).slice(0, 80)}' to delete`,
          `keys[${index}].id`,
        );
      }
      keys.splice(at, 1);
    } else {
      throw invalid(`keys[${index}].$patch: only "delete" is understood`, `keys[${index}].$patch`);
    }
  }
  return keys;
}
