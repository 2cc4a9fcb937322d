// vitest globalSetup of `npm run test:galera`: the cluster must be running, three nodes Synced in
// one primary component, before anything starts. It is not started here: a cluster is the
// operator's (on this project's machines `../shared/tools/galera-cluster.sh start`, nodes on
// 127.0.0.1:3311-3313). CASHTRACK_TEST_GALERA_URLS lists the nodes' server URLs, comma-separated.
import mysql from 'mysql2/promise';

export const DEFAULT_NODES = 'mysql://root@127.0.0.1:3311/,mysql://root@127.0.0.1:3312/,mysql://root@127.0.0.1:3313/';

/** The nodes' server URLs (no database), from CASHTRACK_TEST_GALERA_URLS or the default three. */
export function galeraNodes(): URL[] {
  return (process.env.CASHTRACK_TEST_GALERA_URLS || DEFAULT_NODES).split(',').map((s) => new URL(s.trim()));
}

/** A connection to a node's server (no database selected). */
export function connectNode(node: URL, database?: string): Promise<mysql.Connection> {
  return mysql.createConnection({
    host: node.hostname,
    port: Number(node.port || 3306),
    user: decodeURIComponent(node.username || 'root'),
    password: decodeURIComponent(node.password),
    database,
  });
}

/** wsrep status values of one node. */
export async function wsrepStatus(node: URL): Promise<Record<string, string>> {
  const conn = await connectNode(node);
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>("SHOW STATUS LIKE 'wsrep_%'");
    return Object.fromEntries(rows.map((r) => [String(r.Variable_name), String(r.Value)]));
  } finally {
    await conn.end();
  }
}

export default async function requireCluster(): Promise<void> {
  const nodes = galeraNodes();
  for (const node of nodes) {
    let status: Record<string, string>;
    try {
      status = await wsrepStatus(node);
    } catch (err) {
      throw new Error(
        `Galera node ${node.host} is not reachable (${(err as Error).message}). Start the cluster first (../shared/tools/galera-cluster.sh start), or set CASHTRACK_TEST_GALERA_URLS.`,
      );
    }
    if (status.wsrep_local_state_comment !== 'Synced' || Number(status.wsrep_cluster_size) !== nodes.length || status.wsrep_cluster_status !== 'Primary') {
      throw new Error(
        `Galera node ${node.host} is ${status.wsrep_local_state_comment ?? 'not a Galera node'} (cluster size ${status.wsrep_cluster_size ?? '?'}, ${status.wsrep_cluster_status ?? '?'}); every node must be Synced in one primary component of ${nodes.length}.`,
      );
    }
  }
}
