import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger, OutboundPolicy } from '@gw/shared';
import { outboundAgent } from '@gw/shared/outbound';
import type { Agent } from 'undici';
import type { AlertRegistry } from './alert-registry.ts';
import type { AlertChannel, AlertHistoryEntry, AlertNotification } from './alert-schemas.ts';
import { type SecretReader, withChannelSecrets } from './channel-secrets.ts';
import { ChannelSendError } from './channels/http-post.ts';
import { sendToChannel } from './channels/send-to-channel.ts';

export interface DispatcherOptions {
  registry: AlertRegistry;
  logger?: Logger | undefined;
  /** Sends waiting at most; past it a notification is dropped and counted (evaluation never waits). */
  maxQueued?: number;
  /** Tries per send, the first included. */
  maxAttempts?: number;
  /** Delay before the second try; doubled each time, up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** One send's timeout (HTTP answer, SMTP step). */
  timeoutMs?: number;
  /** Sends running at once. */
  concurrency?: number;
  now?: () => number;
  /** Replaces the real channels (tests of the evaluation). */
  send?: typeof sendToChannel;
  /** Reads the `env.NAME` and secret-manager references of channels' credentials at each send. */
  readSecret?: SecretReader | undefined;
  /** Told what became of each notification to a channel (`gw_alert_notifications_total`). */
  onOutcome?: ((channelType: string, outcome: 'sent' | 'failed' | 'dropped') => void) | undefined;
  /** Where channels may send (the config file's outbound address policy, docs/network.md), checked at connect. */
  outbound?: OutboundPolicy | undefined;
}

interface Job {
  channel: AlertChannel;
  notification: AlertNotification;
}

/**
 * Delivers notifications off the evaluator's path: a bounded queue, a few workers, retries with bounded
 * exponential backoff on retryable failures, and one history entry per send with its outcome.
 */
export class AlertDispatcher {
  private readonly queue: Job[] = [];
  private readonly options: Required<
    Omit<DispatcherOptions, 'logger' | 'registry' | 'onOutcome' | 'outbound' | 'readSecret'>
  > &
    DispatcherOptions;
  /** Every channel connection opens through it, so through the outbound address policy. */
  private readonly agent: Agent | undefined;
  private running = 0;
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  /** Notifications dropped because the queue was full. */
  dropped = 0;

  constructor(options: DispatcherOptions) {
    this.options = {
      maxQueued: 256,
      maxAttempts: 3,
      backoffMs: 1_000,
      maxBackoffMs: 10_000,
      timeoutMs: 10_000,
      concurrency: 2,
      now: Date.now,
      send: sendToChannel,
      ...options,
    };
    this.agent = options.outbound && outboundAgent(options.outbound);
  }

  /** Queues one send per channel; synchronous, never throws. False when (some of) it was dropped. */
  enqueue(notification: AlertNotification, channels: readonly AlertChannel[]): boolean {
    let all = true;
    for (const channel of channels) {
      if (this.closed || this.queue.length >= this.options.maxQueued) {
        this.dropped += 1;
        this.options.onOutcome?.(channel.type, 'dropped');
        all = false;
        this.options.logger?.warn(
          { rule: notification.rule_id, channel: channel.id },
          'alert dropped: queue full',
        );
        continue;
      }
      this.queue.push({ channel, notification });
    }
    this.pump();
    return all;
  }

  /** Sends now, once, and answers the history entry (the API's test endpoint: it reports what happened now). */
  deliver(notification: AlertNotification, channel: AlertChannel): Promise<AlertHistoryEntry> {
    return this.attempt({ channel, notification }, 1);
  }

  /** Resolves once nothing is queued or being sent. */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking work: what is queued is dropped (and counted), sends under way get no further try, and it
   * waits for those (each bounded by its timeout), so shutdown is not held by a receiver that is down.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      this.dropped += 1;
      this.options.onOutcome?.(job.channel.type, 'dropped');
    }
    await this.idle();
    await this.agent?.close();
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.running += 1;
      this.attempt(job)
        .catch((error) => this.options.logger?.warn({ err: error }, 'alert history not written'))
        .finally(() => {
          this.running -= 1;
          this.pump();
          if (this.running === 0 && this.queue.length === 0) {
            for (const resolve of this.idleWaiters.splice(0)) resolve();
          }
        });
    }
  }

  private async attempt(job: Job, maxAttempts = this.options.maxAttempts): Promise<AlertHistoryEntry> {
    const { channel, notification } = job;
    let attempts = 0;
    let failure: string | undefined;
    for (;;) {
      attempts += 1;
      try {
        await this.options.send({
          channel: withChannelSecrets(channel, this.options.readSecret),
          notification,
          timeoutMs: this.options.timeoutMs,
          now: this.options.now(),
          outbound:
            this.options.outbound && this.agent
              ? { policy: this.options.outbound, dispatcher: this.agent }
              : undefined,
        });
        failure = undefined;
        break;
      } catch (error) {
        failure = (error as Error).message;
        const retryable = !(error instanceof ChannelSendError) || error.retryable;
        if (!retryable || attempts >= maxAttempts || this.closed) break;
        const delay = Math.min(this.options.maxBackoffMs, this.options.backoffMs * 2 ** (attempts - 1));
        await sleep(delay * (0.5 + Math.random() / 2));
        if (this.closed) break;
      }
    }
    this.options.onOutcome?.(channel.type, failure === undefined ? 'sent' : 'failed');
    if (failure !== undefined) {
      this.options.logger?.warn(
        { rule: notification.rule_id, channel: channel.id, attempts, error: failure },
        'alert not delivered',
      );
    }
    return this.options.registry.appendHistory({
      time: this.options.now(),
      rule_id: notification.rule_id,
      channel_id: channel.id,
      channel_type: channel.type,
      action: notification.action,
      subject: notification.subject,
      summary: notification.summary,
      outcome: failure === undefined ? 'sent' : 'failed',
      attempts,
      ...(failure !== undefined && { error: failure.slice(0, 500) }),
    });
  }
}
