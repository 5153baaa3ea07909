import type { Pool, PoolClient } from 'pg';

/**
 * A client checked out of the pool, for a transaction. pg reports a dead connection on the client as well as
 * failing its queries, and the pool listens only while the client is idle: unheard, that report ends the
 * process (a PostgreSQL outage in the middle of an audit append did). The failed queries say what happened.
 */
export async function checkOut(pool: Pool): Promise<PoolClient> {
  const client = await pool.connect();
  if (!client.listeners('error').includes(toldByItsQueries)) client.on('error', toldByItsQueries);
  return client;
}

function toldByItsQueries(): void {}
