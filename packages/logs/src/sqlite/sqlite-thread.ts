import { parentPort, Worker, workerData } from 'node:worker_threads';

/** What a database object on a thread offers: synchronous methods, and close. */
type Methods<Database> = {
  [Name in keyof Database]: Database[Name] extends (...args: infer Args) => infer Value
    ? (...args: Args) => Value
    : never;
};

/** A call from the owning thread: its number, the method and its arguments. */
type Call = { id: number; method: string; args: unknown[] };

/** The answer to call `id` (0 answers the opening): a value, or the message of what it threw. */
type Reply = { id: number; value: unknown } | { id: number; error: string };

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * A `node:sqlite` database on a worker thread of its own: `node:sqlite` is synchronous, and a batch insert, a
 * search or a chain check takes milliseconds to seconds, which the gateway's thread must not wait through. The
 * owning thread only passes messages; the worker script calls `serveOnThread` with the database it opens.
 */
export class SqliteThread<Database extends Methods<Database> & { close(): void }> {
  readonly #worker: Worker;
  readonly #what: string;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #failure: Error | undefined;

  private constructor(worker: Worker, what: string) {
    this.#worker = worker;
    this.#what = what;
    worker.on('message', (reply: Reply) => this.#settle(reply));
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', () => this.#fail(new Error(`the ${what} thread has stopped`)));
  }

  /**
   * Starts the worker script (which calls `serveOnThread`) with its options; rejects with what the opening
   * threw. `what` names the database in errors (`request log`, `audit log`), `where` its file or directory.
   */
  static async start<Database extends Methods<Database> & { close(): void }>(options: {
    script: URL;
    data: unknown;
    what: string;
    where: string;
  }): Promise<SqliteThread<Database>> {
    const worker = new Worker(options.script, { workerData: options.data });
    const opened = await new Promise<Reply>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    if ('error' in opened) {
      await worker.terminate();
      throw new Error(`cannot open the ${options.what} in ${options.where}: ${opened.error}`);
    }
    worker.unref();
    return new SqliteThread<Database>(worker, options.what);
  }

  /** Runs a method of the database on its thread; rejects with its error's message. */
  call<Name extends keyof Database & string>(
    method: Name,
    ...args: Parameters<Database[Name]>
  ): Promise<ReturnType<Database[Name]>> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // The thread keeps the process alive only while a call waits for it.
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#worker.postMessage({ id, method, args } satisfies Call);
    });
  }

  /** Closes the database after the calls sent before, then stops the thread; a second close does nothing. */
  async close(): Promise<void> {
    if (this.#failure) return;
    await this.call('close', ...([] as unknown as Parameters<Database['close']>));
    this.#failure = new Error(`the ${this.#what} is closed`);
    await this.#worker.terminate();
  }

  #settle(reply: Reply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if ('error' in reply) pending.reject(new Error(reply.error));
    else pending.resolve(reply.value);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}

/**
 * The worker script's side: opens the database with the thread's options, answers the opening, then runs each
 * call in the order it came. Messages between two threads of one process are structured clones of values both
 * sides typed: there is no foreign input to validate here, and a second decode would double every page's cost.
 */
export function serveOnThread(open: (options: unknown) => object): void {
  const port = parentPort!;
  let database: object | undefined;
  try {
    database = open(workerData);
    port.postMessage({ id: 0, value: null } satisfies Reply);
  } catch (error) {
    port.postMessage({ id: 0, error: String(error) } satisfies Reply);
    port.close();
    return;
  }
  port.on('message', (call: Call) => {
    try {
      const method = (database as Record<string, unknown>)[call.method] as (...args: unknown[]) => unknown;
      const value = method.apply(database, call.args);
      port.postMessage({ id: call.id, value } satisfies Reply);
    } catch (error) {
      port.postMessage({ id: call.id, error: error instanceof Error ? error.message : String(error) });
    }
  });
}
