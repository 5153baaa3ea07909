import { type PiiEntity, SECRET_SHAPES } from '@gw/shared';

/** A personal value found in a text. */
export interface PiiMatch {
  entity: PiiEntity;
  start: number;
  end: number;
}

/** Luhn's checksum, which every payment card number passes and a random digit run passes one time in ten. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index--) {
    let digit = digits.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) return false;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** ISO 13616: the IBAN with its first four characters moved to the end, letters as 10..35, is 1 modulo 97. */
export function passesIbanChecksum(iban: string): boolean {
  const compact = iban.replace(/[ -]/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    // Digits add one decimal place, letters (A=10 … Z=35) two; the remainder stays small at each step.
    remainder = code <= 57 ? (remainder * 10 + (code - 48)) % 97 : (remainder * 100 + (code - 55)) % 97;
  }
  return remainder === 1;
}

const LOCAL_PART = /[A-Za-z0-9._%+-]/;
const DOMAIN_PART = /[A-Za-z0-9.-]/;

/**
 * E-mail addresses, found from each `@` outwards: a text without `@` costs one indexOf, and no pattern can
 * backtrack over a long run of letters.
 */
function findEmails(text: string, matches: PiiMatch[]): void {
  let at = text.indexOf('@');
  while (at !== -1) {
    let start = at;
    while (start > 0 && at - start < 64 && LOCAL_PART.test(text[start - 1]!)) start--;
    let end = at + 1;
    while (end < text.length && end - at < 255 && DOMAIN_PART.test(text[end]!)) end++;
    // The domain ends at its last dot-separated label of letters (a sentence's full stop is not part of it).
    while (end > at + 1 && text[end - 1] === '.') end--;
    const domain = text.slice(at + 1, end);
    const tld = /\.([A-Za-z]{2,24})$/.exec(domain);
    if (start < at && tld && !domain.startsWith('.') && !domain.includes('..')) {
      matches.push({ entity: 'email', start, end });
    }
    at = text.indexOf('@', Math.max(end, at + 1));
  }
}

const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;
const IBAN = /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b/g;
const PHONE = /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,5}){1,4}(?!\w)/g;

function findCards(text: string, matches: PiiMatch[]): void {
  for (const match of text.matchAll(CARD)) {
    const digits = match[0].replace(/[ -]/g, '');
    if (digits.length >= 13 && digits.length <= 19 && passesLuhn(digits)) {
      matches.push({ entity: 'card', start: match.index, end: match.index + match[0].length });
    }
  }
}

function findIbans(text: string, matches: PiiMatch[]): void {
  for (const match of text.matchAll(IBAN)) {
    // The pattern may take the first letters of the next word; the checksum decides where the IBAN ends.
    let candidate = match[0];
    while (candidate.replace(/ /g, '').length >= 15 && !passesIbanChecksum(candidate)) {
      candidate = candidate.slice(0, -1).trimEnd();
    }
    if (candidate.replace(/ /g, '').length >= 15 && passesIbanChecksum(candidate)) {
      matches.push({ entity: 'iban', start: match.index, end: match.index + candidate.length });
    }
  }
}

/**
 * Phone numbers: 10 to 15 digits, or 8 and more after an international `+`; shorter runs are dates, times and
 * quantities far more often than phones.
 */
function findPhones(text: string, matches: PiiMatch[]): void {
  for (const match of text.matchAll(PHONE)) {
    const digits = match[0].replace(/\D/g, '').length;
    const international = match[0].startsWith('+');
    if (digits <= 15 && (digits >= 10 || (international && digits >= 8))) {
      matches.push({ entity: 'phone', start: match.index, end: match.index + match[0].length });
    }
  }
}

/** Shapes of credentials beyond the ones gw redacts from its own logs: JWTs, GitHub and Slack tokens, PEM keys. */
const MORE_SECRET_SHAPES: readonly RegExp[] = [
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/**
 * The shapes that look behind (a URL's password, a credential query parameter) cost a backwards scan at every
 * position of a text; they only ever match inside a token holding `://` or `=`, so they run on those alone.
 */
const LOOKBEHIND_SHAPES = SECRET_SHAPES.filter((shape) => shape.source.startsWith('(?<='));
const PLAIN_SHAPES = SECRET_SHAPES.filter((shape) => !shape.source.startsWith('(?<='));
const URL_LIKE_TOKEN = /[^\s"'<>]*(?::\/\/|=)[^\s"'<>]*/g;

function findSecrets(text: string, matches: PiiMatch[]): void {
  for (const shape of PLAIN_SHAPES) {
    for (const match of text.matchAll(shape)) {
      matches.push({ entity: 'secret', start: match.index, end: match.index + match[0].length });
    }
  }
  if (text.includes('=') || text.includes('://')) {
    for (const token of text.matchAll(URL_LIKE_TOKEN)) {
      for (const shape of LOOKBEHIND_SHAPES) {
        for (const match of token[0].matchAll(shape)) {
          const start = token.index + match.index;
          matches.push({ entity: 'secret', start, end: start + match[0].length });
        }
      }
    }
  }
  for (const shape of MORE_SECRET_SHAPES) {
    for (const match of text.matchAll(shape)) {
      matches.push({ entity: 'secret', start: match.index, end: match.index + match[0].length });
    }
  }
}

/** Most specific first: a card number is not also a phone, an IBAN's digits not a card. */
const DETECTORS: ReadonlyArray<[PiiEntity, (text: string, matches: PiiMatch[]) => void]> = [
  ['secret', findSecrets],
  ['email', findEmails],
  ['iban', findIbans],
  ['card', findCards],
  ['phone', findPhones],
];

/** The personal values of the given kinds in a text, in text order, never overlapping. */
export function findPii(text: string, entities: ReadonlySet<PiiEntity>): PiiMatch[] {
  const found: PiiMatch[] = [];
  for (const [entity, detect] of DETECTORS) {
    if (!entities.has(entity)) continue;
    const matches: PiiMatch[] = [];
    detect(text, matches);
    for (const match of matches) {
      if (!found.some((kept) => match.start < kept.end && kept.start < match.end)) found.push(match);
    }
  }
  return found.sort((left, right) => left.start - right.start);
}
