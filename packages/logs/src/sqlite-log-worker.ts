import { parentPort, workerData } from 'node:worker_threads';
import {
  SqliteLogDatabase,
  type SqliteLogDatabaseOptions,
  type SqliteLogMethods,
} from './sqlite-log-database.ts';

/** A call from the store's thread: its number, the method and its arguments. */
export type SqliteLogCall = {
  [Method in keyof SqliteLogMethods]: {
    id: number;
    method: Method;
    args: Parameters<SqliteLogMethods[Method]>;
  };
}[keyof SqliteLogMethods];

/** The answer to call `id` (0 answers the opening): a value, or the message of what it threw. */
export type SqliteLogReply = { id: number; value: unknown } | { id: number; error: string };

const port = parentPort!;
let database: SqliteLogDatabase | undefined;
try {
  database = SqliteLogDatabase.open(workerData as SqliteLogDatabaseOptions);
  port.postMessage({ id: 0, value: null } satisfies SqliteLogReply);
} catch (error) {
  port.postMessage({ id: 0, error: String(error) } satisfies SqliteLogReply);
  port.close();
}

// Messages between the two threads of one process are structured clones of values both sides typed: there
// is no foreign input to validate here, and a second decode would double the cost of every page.
port.on('message', (call: SqliteLogCall) => {
  try {
    if (!database) throw new Error('the request log is not open');
    const method = database[call.method] as (...args: unknown[]) => unknown;
    const value = method.apply(database, call.args);
    port.postMessage({ id: call.id, value } satisfies SqliteLogReply);
  } catch (error) {
    port.postMessage({ id: call.id, error: error instanceof Error ? error.message : String(error) });
  }
});
