// Measuring around a load run from the parent: the CPU of the daemon child, of this process
// (autocannon) and of a local MariaDB, with an optional CPU profile of the daemon.
import { localServerCpu } from '../ledger-db.js';

/** Runs `fn`, measuring the CPU of the daemon, of this process (autocannon) and of a local MariaDB (1.0 = one core). */
export async function cpuDuring(handle, profileFile, dbUrl, fn) {
  if (profileFile) await handle.request({ type: 'profile-start' }, 'profile-started');
  const dbCpu = localServerCpu(dbUrl)?.();
  const client = process.cpuUsage();
  const clientAt = process.hrtime.bigint();
  const before = await handle.request({ type: 'cpu' }, 'cpu');
  const result = await fn();
  const after = await handle.request({ type: 'cpu' }, 'cpu');
  const clientUs = process.cpuUsage(client);
  const clientCpu = (clientUs.user + clientUs.system) / (Number(process.hrtime.bigint() - clientAt) / 1000);
  const db = dbCpu ? dbCpu() : null;
  if (profileFile) await handle.request({ type: 'profile-stop', file: profileFile }, 'profile-stopped');
  const cpu = (after.usage.user + after.usage.system - before.usage.user - before.usage.system) / (after.at - before.at);
  return { result, cpu, clientCpu, dbCpu: db };
}
