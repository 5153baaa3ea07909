import { randomBytes } from 'node:crypto';
import type { Logger } from '@gw/shared';
import { type Collection, defineCollection, logInvalidDocuments, type Store } from '@gw/shared/store';
import { z } from 'zod';
import {
  type AlertChannel,
  type AlertHistoryEntry,
  type AlertRule,
  alertChannelSchema,
  alertHistoryEntrySchema,
  alertRuleSchema,
} from './alert-schemas.ts';

/** History entries kept by default: the oldest go past it. */
const DEFAULT_HISTORY_LIMIT = 1_000;

/** What dedup and cooldown remember per rule and subject (in the store, so a new lease holder knows it). */
export const alertStateSchema = z.object({
  firing: z.boolean(),
  /** When the last trigger was sent (epoch ms); 0 when none was. */
  last_sent_at: z.number(),
  /** A trigger of the current episode went out, so its clearing is worth a resolve. */
  notified: z.boolean(),
  /** budget_threshold: the highest threshold already notified in `period`. */
  threshold: z.number().optional(),
  period: z.string().optional(),
});
export type AlertState = z.infer<typeof alertStateSchema>;

export interface HistoryPage {
  entries: AlertHistoryEntry[];
  next_cursor: string | null;
}

/**
 * Rules, channels, dedup state and send history of alerts, all as documents of the store: every admin replica
 * and the evaluator (whichever replica holds the lease) read the same ones (a document written by another
 * version: `defineCollection`).
 */
export class AlertRegistry {
  private readonly rules: Collection<AlertRule>;
  private readonly channels: Collection<AlertChannel>;
  private readonly states: Collection<AlertState>;
  private readonly entries: Collection<AlertHistoryEntry>;
  private readonly historyLimit: number;
  private appendsSinceTrim = 0;

  constructor(options: { store: Store; historyLimit?: number; logger?: Logger | undefined }) {
    const invalid = options.logger && logInvalidDocuments(options.logger);
    this.rules = defineCollection(options.store, 'alert-rules', alertRuleSchema, { invalid });
    this.channels = defineCollection(options.store, 'alert-channels', alertChannelSchema, { invalid });
    this.states = defineCollection(options.store, 'alert-state', alertStateSchema, { invalid });
    this.entries = defineCollection(options.store, 'alert-history', alertHistoryEntrySchema, { invalid });
    this.historyLimit = options.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  }

  async listRules(): Promise<AlertRule[]> {
    return this.rules.values();
  }

  async getRule(id: string): Promise<AlertRule | undefined> {
    return this.rules.get(id);
  }

  async putRule(rule: AlertRule): Promise<void> {
    await this.rules.put(rule.id, rule);
  }

  async deleteRule(id: string): Promise<boolean> {
    return this.rules.delete(id);
  }

  async listChannels(): Promise<AlertChannel[]> {
    return this.channels.values();
  }

  async getChannel(id: string): Promise<AlertChannel | undefined> {
    return this.channels.get(id);
  }

  async putChannel(channel: AlertChannel): Promise<void> {
    await this.channels.put(channel.id, channel);
  }

  async deleteChannel(id: string): Promise<boolean> {
    return this.channels.delete(id);
  }

  async readState(key: string): Promise<AlertState | undefined> {
    return this.states.get(key);
  }

  async writeState(key: string, state: AlertState): Promise<void> {
    await this.states.put(key, state);
  }

  /** Every state key with its document (the evaluator resolves subjects that stopped appearing). */
  async listStates(): Promise<Array<{ key: string; state: AlertState }>> {
    return (await this.states.list()).map(({ id, value }) => ({ key: id, state: value }));
  }

  async deleteState(key: string): Promise<void> {
    await this.states.delete(key);
  }

  /** Adds an entry; past the limit the oldest are deleted (checked every few appends, so the list stays bounded). */
  async appendHistory(entry: Omit<AlertHistoryEntry, 'id'>): Promise<AlertHistoryEntry> {
    // Time first, zero-padded, so ids sort as the entries were sent.
    const stored = {
      id: `${String(entry.time).padStart(15, '0')}-${randomBytes(4).toString('hex')}`,
      ...entry,
    };
    await this.entries.put(stored.id, stored);
    this.appendsSinceTrim += 1;
    if (this.appendsSinceTrim >= Math.max(1, Math.floor(this.historyLimit / 10))) {
      this.appendsSinceTrim = 0;
      await this.trimHistory();
    }
    return stored;
  }

  async trimHistory(): Promise<void> {
    const ids = (await this.entries.ids()).sort();
    for (const id of ids.slice(0, Math.max(0, ids.length - this.historyLimit))) {
      await this.entries.delete(id);
    }
  }

  /** Newest first; `cursor` is the `next_cursor` of the previous page. */
  async history(options: { limit: number; cursor?: string | undefined }): Promise<HistoryPage> {
    const entries = (await this.entries.values())
      .filter((entry) => options.cursor === undefined || entry.id < options.cursor)
      .sort((left, right) => (left.id < right.id ? 1 : -1));
    const page = entries.slice(0, options.limit);
    const more = entries.length > options.limit;
    return { entries: page, next_cursor: more ? (page.at(-1)?.id ?? null) : null };
  }
}
