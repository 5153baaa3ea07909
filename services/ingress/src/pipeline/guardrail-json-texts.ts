import type { SideTexts } from '@gw/guardrails';

/** Where a text sits in a JSON value: the path to it, and whether it is a value or an object's key. */
interface TextSlot {
  path: readonly (string | number)[];
  key: boolean;
}

/**
 * Strings that are not text a model reads, by the key that holds them: ids the provider made, binary data
 * and URLs of images, audio and files (checking them costs much and finds only false matches), and opaque
 * tokens. Only these leaves are skipped: what is below such a key when it holds an object is still read, so
 * a schema property named `id` cannot hide its description.
 */
const NOT_TEXT = new Set([
  'role',
  'id',
  'tool_call_id',
  'call_id',
  'url',
  'image_url',
  'data',
  'file_data',
  'file_id',
  'signature',
  'encrypted_content',
]);

/** Objects whose keys are names a model reads: a JSON schema's property and definition names. */
const NAMING = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

/** A wire format's own enum (`"type": "function"`, `"object"`): not text anyone wrote to the model. */
const WIRE_ENUM = /^[a-z_]{1,40}$/;

/**
 * Top-level request fields the provider receives but the model never reads: who is calling, for abuse
 * monitoring and prompt caching, and the caller's own labels. Checking them would block or rewrite requests
 * for an e-mail used as a user id.
 */
const NOT_MODEL_INPUT = new Set(['model', 'user', 'safety_identifier', 'prompt_cache_key', 'metadata']);

/** `messages[0].content[1].text`; a key: `tools[0].function.parameters.properties{secret_plan}`. */
function locationOf(slot: TextSlot, prefix: string): string {
  let location = prefix;
  const last = slot.key ? slot.path.length - 1 : slot.path.length;
  for (let index = 0; index < last; index++) {
    const step = slot.path[index]!;
    location += typeof step === 'number' ? `[${step}]` : location === '' ? step : `.${step}`;
  }
  return slot.key ? `${location}{${String(slot.path.at(-1))}}` : location;
}

/**
 * Every text of a JSON object the provider receives, as the guardrails read it: each string value (tool
 * definitions, schemas, predictions, tool-call arguments, stop sequences…) and the property names of schemas
 * (the model reads them too), with its location.
 */
export function jsonTexts(value: Record<string, unknown>, prefix = ''): SideTexts & { slots: TextSlot[] } {
  const texts: string[] = [];
  const locations: string[] = [];
  const slots: TextSlot[] = [];
  const add = (text: string, slot: TextSlot) => {
    texts.push(text);
    slots.push(slot);
    locations.push(locationOf(slot, prefix));
  };
  const walk = (node: unknown, path: (string | number)[]) => {
    if (typeof node === 'string') {
      const holder = path.at(-1);
      if (typeof holder === 'string' && NOT_TEXT.has(holder)) return;
      if (holder === 'type' && WIRE_ENUM.test(node)) return;
      add(node, { path, key: false });
    } else if (Array.isArray(node)) {
      node.forEach((item, index) => {
        walk(item, [...path, index]);
      });
    } else if (node !== null && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) {
        if (path.length === 0 && NOT_MODEL_INPUT.has(key)) continue;
        if (NAMING.has(String(path.at(-1)))) add(key, { path: [...path, key], key: true });
        walk(item, [...path, key]);
      }
    }
  };
  walk(value, []);
  return { texts, locations, slots };
}

/**
 * A copy of `value` with the texts of `slots` replaced by `changed` (one per slot, in order): values first,
 * then keys deepest first, so every path still leads where it did when it is applied.
 */
export function rewriteJson<Value extends Record<string, unknown>>(
  value: Value,
  slots: readonly TextSlot[],
  changed: readonly string[],
): Value {
  const copy = structuredClone(value);
  const parentOf = (path: readonly (string | number)[]) => {
    let node: unknown = copy;
    for (const step of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[step];
    return node as Record<string | number, unknown>;
  };
  const renames: Array<{ slot: TextSlot; text: string }> = [];
  slots.forEach((slot, index) => {
    const text = changed[index];
    if (text === undefined) return;
    if (slot.key) {
      if (text !== slot.path.at(-1)) renames.push({ slot, text });
      return;
    }
    parentOf(slot.path)[slot.path.at(-1)!] = text;
  });
  renames.sort((left, right) => right.slot.path.length - left.slot.path.length);
  for (const { slot, text } of renames) {
    const parent = parentOf(slot.path);
    const old = String(slot.path.at(-1));
    // Rebuilt in order, so the renamed key keeps its place.
    const entries = Object.entries(parent).map(([key, item]) => [key === old ? text : key, item] as const);
    for (const key of Object.keys(parent)) delete parent[key];
    for (const [key, item] of entries) parent[key] = item;
  }
  return copy;
}
