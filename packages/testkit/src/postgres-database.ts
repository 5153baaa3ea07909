import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { type ClusterLaunchOptions, type LaunchedCluster, startCluster } from './gateway-launcher.ts';

/**
 * The PostgreSQL server tests use: GW_TEST_POSTGRES_URL, else the local one `.ci/run` starts (role
 * `postgres`, password `postgres`; a server that trusts loopback ignores the password).
 */
const DEFAULT_SERVER_URL = 'postgres://postgres:postgres@127.0.0.1:5432/postgres';

/** A database of one test run; drop it when the run ends. */
export interface TestDatabase {
  /** Connects to the new database. */
  url: string;
  /** Drops the database, disconnecting whoever is still connected. */
  drop(): Promise<void>;
  /** Runs a statement in the database on a connection of its own (a test tampering with stored rows). */
  sql(statement: string): Promise<void>;
}

/** Creates a fresh, uniquely named database (`gw_test_<pid>_<random>`) on the test server. */
export async function createTestDatabase(
  serverUrl = process.env['GW_TEST_POSTGRES_URL'] || DEFAULT_SERVER_URL,
): Promise<TestDatabase> {
  const name = `gw_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const onServer = async (statement: string) => {
    const client = new Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
    try {
      await client.connect();
      await client.query(statement);
    } catch (error) {
      const server = new URL(serverUrl);
      throw new Error(
        `PostgreSQL at ${server.host} as ${server.username || 'the default user'}: ${(error as Error).message}` +
          ' (tests use GW_TEST_POSTGRES_URL; .ci/run installs and starts a local server)',
        { cause: error },
      );
    } finally {
      await client.end().catch(() => {});
    }
  };
  await onServer(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const sql = async (statement: string) => {
    const client = new Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end().catch(() => {});
    }
  };
  return { url: url.toString(), drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), sql };
}

/**
 * A cluster whose request logs (and audit log) go to a PostgreSQL database of its own, as a deployment's do;
 * closing the cluster drops the database.
 */
export async function startClusterWithLogs(options: ClusterLaunchOptions): Promise<LaunchedCluster> {
  const database = await createTestDatabase();
  let cluster: LaunchedCluster;
  try {
    cluster = await startCluster({ ...options, env: { ...options.env, GW_LOGS_DATABASE_URL: database.url } });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const close = cluster.close.bind(cluster);
  cluster.close = async () => {
    try {
      await close();
    } finally {
      await database.drop();
    }
  };
  return cluster;
}
