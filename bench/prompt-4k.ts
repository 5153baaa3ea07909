/**
 * A 4 KB prompt as a support conversation carries it: prose with a few personal values in it (an e-mail, a
 * phone, a card, an IBAN, a key), the case a PII guardrail is for. Deterministic, so runs compare.
 */
const PARAGRAPH =
  'Hello team, I am writing about the invoice we received last week for the consulting work on the data ' +
  'migration project. Several line items look duplicated, and the hourly rate differs from the one agreed in ' +
  'the statement of work signed in March. Could you check the timesheets against the milestones and send a ' +
  'corrected version before the end of the month? We would also like a summary of the remaining budget. ';

const PERSONAL =
  'You can reach me at dana.miller@example.com or on +44 20 7946 0958. The payment went from card ' +
  '4111 1111 1111 1111 to IBAN GB82 WEST 1234 5698 7654 32, and the portal key I used was ' +
  'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx. ';

function build(size: number): string {
  let text = PERSONAL;
  while (text.length < size) text += PARAGRAPH;
  return text.slice(0, size);
}

export const PROMPT_4K = build(4096);
