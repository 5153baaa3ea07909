import { z } from 'zod';
import { usageSchema } from './completion.ts';

/**
 * How long a router's report of a call is kept: longer than the default settle deadline (15 minutes) and the
 * sweeper's interval after it, so the settle of a call its ingress lost finds it.
 */
export const CALL_REPORT_TTL_MS = 20 * 60 * 1000;

/**
 * What a router says of one routed call once it ended, under the request's id in the shared store: how many
 * upstream attempts it sent and how the call ended. A call the ingress lost track of (its router killed,
 * frozen, or late) is charged from these (docs/governance.md "Lost calls"). The kind is said by `outcome`.
 */
export const callReportSchema = z.discriminatedUnion('outcome', [
  /** The upstream answered: the usage of the answer, priced by the model it names. */
  z.object({
    outcome: z.literal('answered'),
    attempts: z.number().int().min(0),
    provider: z.string(),
    model: z.string(),
    usage: usageSchema,
  }),
  /** No answer: every attempt failed, or none was sent. */
  z.object({ outcome: z.literal('failed'), attempts: z.number().int().min(0) }),
  /**
   * Sent upstream but not metered: its caller went away (a cancel, a broken lane) before the answer, or a stream
   * ended without usage. The upstream read the prompt.
   */
  z.object({ outcome: z.literal('unmetered'), attempts: z.number().int().min(0) }),
]);

export type CallReport = z.infer<typeof callReportSchema>;
