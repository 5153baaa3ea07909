import { randomBytes } from 'node:crypto';
import type { Store } from '@gw/shared/store';
import { z } from 'zod';
import {
  type AlertChannel,
  type AlertHistoryEntry,
  type AlertRule,
  alertChannelSchema,
  alertHistoryEntrySchema,
  alertRuleSchema,
} from './alert-schemas.ts';

const RULES = 'alert-rules';
const CHANNELS = 'alert-channels';
const HISTORY = 'alert-history';
const STATE = 'alert-state';
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
 * and the evaluator (whichever replica holds the lease) read the same ones. A document that no longer parses
 * (written by another version) is skipped, never fatal.
 */
export class AlertRegistry {
  private readonly store: Store;
  private readonly historyLimit: number;
  private appendsSinceTrim = 0;

  constructor(options: { store: Store; historyLimit?: number }) {
    this.store = options.store;
    this.historyLimit = options.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  }

  async listRules(): Promise<AlertRule[]> {
    return this.listOf(RULES, alertRuleSchema);
  }

  async getRule(id: string): Promise<AlertRule | undefined> {
    return parsed(alertRuleSchema, await this.store.get(RULES, id));
  }

  async putRule(rule: AlertRule): Promise<void> {
    await this.store.put(RULES, rule.id, rule);
  }

  async deleteRule(id: string): Promise<boolean> {
    return this.store.delete(RULES, id);
  }

  async listChannels(): Promise<AlertChannel[]> {
    return this.listOf(CHANNELS, alertChannelSchema);
  }

  async getChannel(id: string): Promise<AlertChannel | undefined> {
    return parsed(alertChannelSchema, await this.store.get(CHANNELS, id));
  }

  async putChannel(channel: AlertChannel): Promise<void> {
    await this.store.put(CHANNELS, channel.id, channel);
  }

  async deleteChannel(id: string): Promise<boolean> {
    return this.store.delete(CHANNELS, id);
  }

  async readState(key: string): Promise<AlertState | undefined> {
    return parsed(alertStateSchema, await this.store.get(STATE, key));
  }

  async writeState(key: string, state: AlertState): Promise<void> {
    await this.store.put(STATE, key, state);
  }

  /** Every state key with its document (the evaluator resolves subjects that stopped appearing). */
  async listStates(): Promise<Array<{ key: string; state: AlertState }>> {
    const states: Array<{ key: string; state: AlertState }> = [];
    for (const { id, value } of await this.store.list(STATE)) {
      const state = parsed(alertStateSchema, value);
      if (state) states.push({ key: id, state });
    }
    return states;
  }

  async deleteState(key: string): Promise<void> {
    await this.store.delete(STATE, key);
  }

  /** Adds an entry; past the limit the oldest are deleted (checked every few appends, so the list stays bounded). */
  async appendHistory(entry: Omit<AlertHistoryEntry, 'id'>): Promise<AlertHistoryEntry> {
    // Time first, zero-padded, so ids sort as the entries were sent.
    const stored = {
      id: `${String(entry.time).padStart(15, '0')}-${randomBytes(4).toString('hex')}`,
      ...entry,
    };
    await this.store.put(HISTORY, stored.id, stored);
    this.appendsSinceTrim += 1;
    if (this.appendsSinceTrim >= Math.max(1, Math.floor(this.historyLimit / 10))) {
      this.appendsSinceTrim = 0;
      await this.trimHistory();
    }
    return stored;
  }

  async trimHistory(): Promise<void> {
    const ids = (await this.store.list(HISTORY)).map((document) => document.id).sort();
    for (const id of ids.slice(0, Math.max(0, ids.length - this.historyLimit))) {
      await this.store.delete(HISTORY, id);
    }
  }

  /** Newest first; `cursor` is the `next_cursor` of the previous page. */
  async history(options: { limit: number; cursor?: string | undefined }): Promise<HistoryPage> {
    const entries = (await this.listOf(HISTORY, alertHistoryEntrySchema))
      .filter((entry) => options.cursor === undefined || entry.id < options.cursor)
      .sort((left, right) => (left.id < right.id ? 1 : -1));
    const page = entries.slice(0, options.limit);
    const more = entries.length > options.limit;
    return { entries: page, next_cursor: more ? (page.at(-1)?.id ?? null) : null };
  }

  private async listOf<Schema extends z.ZodType>(
    collection: string,
    schema: Schema,
  ): Promise<z.infer<Schema>[]> {
    const values: z.infer<Schema>[] = [];
    for (const { value } of await this.store.list(collection)) {
      const item = parsed(schema, value);
      if (item !== undefined) values.push(item);
    }
    return values;
  }
}

function parsed<Schema extends z.ZodType>(schema: Schema, value: unknown): z.infer<Schema> | undefined {
  if (value === undefined) return undefined;
  const result = schema.safeParse(value);
  return result.success ? result.data : undefined;
}
