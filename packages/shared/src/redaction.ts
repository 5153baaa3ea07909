import { looksLikeSecretReference } from './config/secret-reference.ts';

/**
 * The one list of what gw never shows: field names that carry credentials, the shapes of well-known keys,
 * and the masking of a value. The logger, the admin API's views and the relay of upstream errors all use it.
 */

/** Field names whose string values are credentials (provider key settings, headers, MCP client settings). */
export const SECRET_FIELD =
  /secret|token|password|passwd|credential|api[-_]?key|access[-_]?key|private|authorization|(?:^|[-_])auth(?:$|[-_])|cookie|signature/i;

/** Log paths (pino) that hold credentials of callers and of providers. */
export const SECRET_LOG_PATHS = [
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["api-key"]',
  'headers["x-goog-api-key"]',
  'headers["x-gw-vk"]',
  'headers.cookie',
  'authorization',
  'apiKey',
  'api_key',
  'key.value',
  'keys[*].value',
  'config.keys[*].value',
  'virtual_key',
  'value',
  'secret_key',
  'access_key',
  'session_token',
];

/** Query parameters whose values are credentials (`?api_key=`, `&access_token=`, `&sig=`). */
const SECRET_PARAMETER = /token|key|secret|password|auth|sig/i;

/**
 * Shapes of credentials anywhere in a text: OpenAI/Anthropic/gw keys, AWS access key ids, Google API keys,
 * bearer and basic authorizations, the password of a URL and the values of its credential query parameters.
 */
const KEY_SHAPES: readonly RegExp[] = [
  /\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{16,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{12,}/g,
  /\b[Bb]asic\s+[A-Za-z0-9+/]{8,}={0,2}/g,
  /(?<=:\/\/[^/\s:@]*:)[^@\s/]+(?=@)/g,
  new RegExp(`(?<=[?&][^=&\\s]*(?:${SECRET_PARAMETER.source})[^=&\\s]*=)[^&\\s#"']+`, 'gi'),
];

/** The shapes of credentials `redactText` takes out (global expressions: use them with matchAll or replace). */
export const SECRET_SHAPES: readonly RegExp[] = KEY_SHAPES;

/** A URL as gw shows it: its password and the values of credential query parameters masked (`****`). */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '****';
    for (const name of [...url.searchParams.keys()]) {
      if (SECRET_PARAMETER.test(name)) url.searchParams.set(name, '****');
    }
    return url.toString();
  } catch {
    return '****';
  }
}

/** Whether a part of a URL is what an answer shows for a credential: the mask, or `[redacted]` (viewer-redaction). */
function isMask(text: string): boolean {
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    // Not percent-encoding: compared as written.
  }
  return decoded === '****' || decoded === '[redacted]';
}

/**
 * A URL written back with credentials shown as answers show them (`user:****@`, `?token=****`, or a reader's
 * `[redacted]`): those credentials taken from `stored`, the rest as written. Undefined when it masks none that
 * `stored` carries. Whether `stored`'s credentials may go where the written URL points is the caller's to say.
 */
export function unmaskUrl(written: string, stored: string): URL | undefined {
  let url: URL;
  let before: URL;
  try {
    url = new URL(written);
    before = new URL(stored);
  } catch {
    return undefined;
  }
  let unmasked = false;
  if (before.password && isMask(url.password)) {
    url.password = before.password;
    unmasked = true;
  }
  for (const [name, value] of [...url.searchParams]) {
    const kept = before.searchParams.get(name);
    if (!SECRET_PARAMETER.test(name) || kept === null || !isMask(value)) continue;
    url.searchParams.set(name, kept);
    unmasked = true;
  }
  return unmasked ? url : undefined;
}

/**
 * The credentials a URL carries (its password, as written and as Basic authorization, and the values of
 * credential query parameters), to take out of texts that echo them.
 */
export function urlSecrets(value: string | undefined): string[] {
  if (!value) return [];
  try {
    const url = new URL(value);
    const password = decodeURIComponent(url.password);
    // The Basic authorization a client sends for the user-info, which servers echo too.
    const basic = password
      ? Buffer.from(`${decodeURIComponent(url.username)}:${password}`).toString('base64')
      : '';
    const secrets = [url.password, password, basic];
    for (const [name, parameter] of url.searchParams)
      if (SECRET_PARAMETER.test(name)) secrets.push(parameter);
    return secrets.filter((secret) => secret.length > 0);
  } catch {
    return [];
  }
}

/** A value as gw shows it: its first three and last four characters around `****` (or only `****`). */
export function maskSecret(value: string): string {
  // References (`env.NAME`, `vault.…`: docs/vault.md) name where a secret is, not the secret: shown as written.
  if (value === '' || value.startsWith('env.') || looksLikeSecretReference(value)) return value;
  return value.length > 12 ? `${value.slice(0, 3)}****${value.slice(-4)}` : '****';
}

/**
 * Whether a value written back stands for the stored secret: the masked form every answer shows, or the
 * `[redacted]` of a reader without `secrets:read` (admin viewer-redaction). A PUT of a read keeps the secret.
 */
export function standsForSecret(value: unknown, stored: string): boolean {
  return value === maskSecret(stored) || value === '[redacted]';
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What of a secret's base64 always shows, wherever the secret sits in the encoded bytes: for each of the three
 * alignments, the characters that depend on the secret's bytes alone (those of the first and last, partly
 * shared with neighbouring bytes, left out). Standard and URL-safe alphabets, padding dropped.
 */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const cores = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // Characters wholly made of the secret's bits: from the first 6-bit group past the offset's bits to the
    // last group that ends inside the secret.
    const start = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(start, end);
    if (core.length >= 8) {
      cores.add(core);
      cores.add(core.replaceAll('+', '-').replaceAll('/', '_'));
    }
  }
  return [...cores];
}

/** Compiled forms of secrets, by value (a provider's few keys are asked for again on every error relayed). */
const secretForms = new Map<string, RegExp>();
const MAX_SECRET_FORMS = 1_000;

/**
 * The forms of a secret an upstream may echo: as written, with whitespace between its characters (`s k - …`,
 * a line break in the middle), and inside base64 (an echoed Authorization header, a JSON blob encoded).
 */
function secretForm(secret: string): RegExp {
  let form = secretForms.get(secret);
  if (form) return form;
  const spaced = [...secret].map(escapeRegExp).join('\\s*');
  form = new RegExp([spaced, ...base64Cores(secret).map(escapeRegExp)].join('|'), 'g');
  if (secretForms.size >= MAX_SECRET_FORMS) secretForms.clear();
  secretForms.set(secret, form);
  return form;
}

/**
 * A text with every known secret (values of at least 8 characters: as written, spaced out, or in base64) and
 * everything shaped like a key replaced by `[redacted]`.
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let redacted = text;
  for (const secret of secrets)
    if (secret.length >= 8) redacted = redacted.replace(secretForm(secret), '[redacted]');
  for (const shape of KEY_SHAPES) redacted = redacted.replace(shape, '[redacted]');
  return redacted;
}

/** A JSON value with `redactText` applied to every string in it (keys of objects included). */
export function redactJson(value: unknown, secrets: readonly string[] = []): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, secrets));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([field, item]) => [redactText(field, secrets), redactJson(item, secrets)]),
    );
  }
  return value;
}
