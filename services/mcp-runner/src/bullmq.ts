// The BullMQ transport of tool calls: the queue ingress sends calls to, and the workers runners take them from.
export * from './bullmq/bull-tool-queue.ts';
export * from './bullmq/tool-worker.ts';
