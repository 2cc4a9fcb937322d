// Intake history for the watchdog's tests: accepted postbacks written straight into the postbacks
// table, hundreds per multi-row INSERT, so four weeks of them take a moment on either dialect.
import type { Context } from '../../src/context.js';

const COLUMNS = ['received_at', 'last_seen_at', 'network', 'method', 'outcome', 'test'];
const ROWS = 500;

/** Stores one accepted (non-test) postback of `network` at each of `times`. */
export async function seedPostbacks(ctx: Context, network: string, times: Date[]): Promise<void> {
  for (let i = 0; i < times.length; i += ROWS) {
    const chunk = times.slice(i, i + ROWS);
    const values = chunk.map(() => `(${COLUMNS.map(() => '?').join(', ')})`).join(', ');
    await ctx.db.execute(
      `INSERT INTO postbacks (${COLUMNS.join(', ')}) VALUES ${values}`,
      chunk.flatMap((at) => [at, at, network, 'GET', 'accepted', false]),
    );
  }
}

/** Every `stepMinutes` from `from` (inclusive) to `to` (exclusive), keeping the instants `keep` accepts. */
export function every(from: Date | string, to: Date | string, stepMinutes: number, keep: (at: Date) => boolean = () => true): Date[] {
  const out: Date[] = [];
  for (let t = new Date(from).getTime(); t < new Date(to).getTime(); t += stepMinutes * 60_000) {
    const at = new Date(t);
    if (keep(at)) out.push(at);
  }
  return out;
}
