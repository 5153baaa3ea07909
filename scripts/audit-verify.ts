// The audit log's chain check from outside the gateway (docs/admin-access.md "Audit log"):
//   pnpm audit:verify --sqlite <data dir or audit-log.sqlite>
//   pnpm audit:verify --postgres <url> [--schema <name>]
//   pnpm audit:verify --file <export.jsonl, or - for standard input>
// Prints OK with the record count and the head hash, or the first broken record; `--json` prints the check's
// answer as JSON instead. Exit code 0 when the chain is intact, 1 when it is broken, 2 when it could not be read.
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { AuditChainCheck, type AuditVerification } from '@gw/logs';
import { PostgresAuditStore } from '@gw/logs/postgres-audit';
import { SQLITE_AUDIT_FILE_NAME, SqliteAuditDatabase } from '@gw/logs/sqlite-audit';

const USAGE =
  'usage: pnpm audit:verify --sqlite <data dir or file> | --postgres <url> [--schema <name>] | --file <path or -> [--json]';

/** An export's JSON lines, in the order written; a line that is not JSON is the record it should have been. */
async function verifyJsonLines(input: NodeJS.ReadableStream): Promise<AuditVerification> {
  const check = new AuditChainCheck();
  let lineNumber = 0;
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      return check.malformed(undefined, `line ${lineNumber} is not JSON (${(error as Error).message})`);
    }
    const broken = check.nextValue(value);
    if (broken) return broken;
  }
  return check.result();
}

function verifySqlite(location: string): AuditVerification {
  const file =
    existsSync(location) && statSync(location).isDirectory()
      ? path.join(location, SQLITE_AUDIT_FILE_NAME)
      : location;
  if (!existsSync(file)) throw new Error(`${file}: no such file`);
  const database = SqliteAuditDatabase.open({ file, readOnly: true });
  try {
    return database.verify();
  } finally {
    database.close();
  }
}

async function verifyPostgres(url: string, schema: string | undefined): Promise<AuditVerification> {
  const store = await PostgresAuditStore.open({ url, readOnly: true, ...(schema && { schema }) });
  try {
    return await store.verify();
  } finally {
    await store.close();
  }
}

async function main(): Promise<number> {
  let values: { sqlite?: string; postgres?: string; schema?: string; file?: string; json?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        sqlite: { type: 'string' },
        postgres: { type: 'string' },
        schema: { type: 'string' },
        file: { type: 'string' },
        json: { type: 'boolean' },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const sources = [values.sqlite, values.postgres, values.file].filter((source) => source !== undefined);
  if (sources.length !== 1) {
    console.error(`name exactly one of --sqlite, --postgres and --file\n${USAGE}`);
    return 2;
  }
  let result: AuditVerification;
  try {
    if (values.sqlite !== undefined) result = verifySqlite(values.sqlite);
    else if (values.postgres !== undefined) result = await verifyPostgres(values.postgres, values.schema);
    else {
      const file = values.file!;
      result = await verifyJsonLines(file === '-' ? process.stdin : createReadStream(file));
    }
  } catch (error) {
    console.error(`cannot read the audit log: ${(error as Error).message}`);
    return 2;
  }
  if (values.json) console.log(JSON.stringify(result));
  else if (result.ok) console.log(`OK: ${result.records} records, the chain is intact (head ${result.head})`);
  else console.log(`BROKEN at record ${result.seq} (${result.reason}): ${result.message}`);
  return result.ok ? 0 : 1;
}

process.exitCode = await main();
