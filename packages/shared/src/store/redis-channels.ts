import type { RedisConnection } from './redis-connection.ts';
import { openSubscriberConnection, quit } from './redis-store-connections.ts';
import type { MessageHandler } from './store.ts';

interface ChannelSubscriptions {
  subscriptions: Set<Subscription>;
  /** Settles when Redis has confirmed SUBSCRIBE, so no subscriber returns before messages can arrive. */
  subscribed: Promise<unknown>;
}

interface Subscription {
  handler: MessageHandler;
}

/**
 * The RedisStore's pub/sub: channels are `<prefix>channel:<name>`, each message numbered by the count at
 * `<prefix>changes:<name>` and sent as `<number> <message>`. Subscribing takes a connection over for good, so
 * subscriptions get their own, opened on first use; publishing and counting use the command connection.
 */
export class RedisChannels {
  private readonly connection: RedisConnection;
  private readonly url: string;
  private readonly prefix: string;
  private readonly channelPrefix: string;
  private readonly reportError: (error: unknown) => void;
  private readonly channels = new Map<string, ChannelSubscriptions>();
  private subscriber: RedisConnection | undefined;
  private closed = false;

  constructor(options: {
    /** The command connection. */
    connection: RedisConnection;
    url: string;
    prefix: string;
    reportError: (error: unknown) => void;
  }) {
    this.connection = options.connection;
    this.url = options.url;
    this.prefix = options.prefix;
    this.channelPrefix = `${options.prefix}channel:`;
    this.reportError = options.reportError;
  }

  async publish(channel: string, message: string): Promise<void> {
    // Numbered first, then sent as `<number> <message>`: a subscriber that sees the count move before the
    // message arrives waits for it one check longer.
    const sequence = await this.connection.incr(this.changeCountKey(channel));
    await this.connection.publish(this.channelName(channel), `${sequence} ${message}`);
  }

  async changeCount(channel: string): Promise<number> {
    return Number((await this.connection.get(this.changeCountKey(channel))) ?? 0);
  }

  async subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>> {
    // Past close(), a subscriber connection opened here would never be quit.
    if (this.closed) throw new Error('RedisStore is closed');
    const subscriber = this.subscriberConnection();
    const subscription: Subscription = { handler };
    let entry = this.channels.get(channel);
    if (entry === undefined) {
      // The map is updated before any await, and one connection sends commands in order, so a SUBSCRIBE and
      // an UNSUBSCRIBE racing for the same channel reach Redis in the order they were decided here.
      entry = { subscriptions: new Set(), subscribed: subscriber.subscribe(this.channelName(channel)) };
      this.channels.set(channel, entry);
    }
    entry.subscriptions.add(subscription);
    try {
      await entry.subscribed;
    } catch (error) {
      // The SUBSCRIBE failure is the error worth reporting, not a failed clean-up after it.
      await this.unsubscribe(channel, subscription).catch(() => undefined);
      throw error;
    }
    let unsubscribed: Promise<void> | undefined;
    return () => {
      unsubscribed ??= this.unsubscribe(channel, subscription);
      return unsubscribed;
    };
  }

  /** Drops every subscription and quits the subscriber connection; no subscription can be made after it. */
  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    if (this.subscriber !== undefined) await quit(this.subscriber);
  }

  private subscriberConnection(): RedisConnection {
    if (this.subscriber === undefined) {
      const subscriber = openSubscriberConnection({
        url: this.url,
        prefix: this.prefix,
        reportError: this.reportError,
      });
      subscriber.on('message', (channelName: string, message: string) => this.deliver(channelName, message));
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }

  private async unsubscribe(channel: string, subscription: Subscription): Promise<void> {
    const entry = this.channels.get(channel);
    if (entry === undefined || !entry.subscriptions.delete(subscription)) return;
    if (entry.subscriptions.size > 0) return;
    this.channels.delete(channel);
    await this.subscriber?.unsubscribe(this.channelName(channel));
  }

  private deliver(channelName: string, payload: string): void {
    if (!channelName.startsWith(this.channelPrefix)) return;
    const entry = this.channels.get(channelName.slice(this.channelPrefix.length));
    if (entry === undefined) return;
    const space = payload.indexOf(' ');
    const sequence = Number(payload.slice(0, space));
    if (space === -1 || !Number.isSafeInteger(sequence)) {
      this.reportError(new Error(`A message on ${channelName} has no number; ignored`));
      return;
    }
    const message = payload.slice(space + 1);
    for (const subscription of entry.subscriptions) {
      try {
        subscription.handler(message, sequence);
      } catch (error) {
        this.reportError(error);
      }
    }
  }

  private changeCountKey(channel: string): string {
    return `${this.prefix}changes:${channel}`;
  }

  private channelName(channel: string): string {
    return `${this.channelPrefix}${channel}`;
  }
}
