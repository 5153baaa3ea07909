import { SqliteLogDatabase, type SqliteLogDatabaseOptions } from './sqlite-log-database.ts';
import { serveOnThread } from './sqlite-thread.ts';

// The request log's thread (sqlite-log-store.ts starts it): the database runs here, call by call.
serveOnThread((options) => SqliteLogDatabase.open(options as SqliteLogDatabaseOptions));
