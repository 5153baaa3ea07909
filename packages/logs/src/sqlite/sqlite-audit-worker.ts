import { SqliteAuditDatabase, type SqliteAuditDatabaseOptions } from './sqlite-audit-database.ts';
import { serveOnThread } from './sqlite-thread.ts';

// The audit log's thread (sqlite-audit-store.ts starts it): the database runs here, call by call.
serveOnThread((options) => SqliteAuditDatabase.open(options as SqliteAuditDatabaseOptions));
