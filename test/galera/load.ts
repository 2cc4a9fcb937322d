// The load of the Galera run: clients crediting and debiting members through every daemon in
// turn, as behind a balancer, each adjustment with an Idempotency-Key so its effect is known
// exactly once however the daemons and nodes fail.
import { randomUUID } from 'node:crypto';
import type { DaemonProcess } from '../helpers/daemon-processes.js';
import { NS } from '../helpers/http.js';

/** Clients at once. */
export const CLIENTS = 24;

export interface LoadResult {
  acknowledged: number;
  /** Per member id, the sum of the acknowledged effects in cents. */
  effects: Map<number, number>;
  /** Answers other than 201, by `status code`: 503 svc_database_unavailable is retried on another daemon. */
  answers: Map<string, number>;
  seconds: number;
}

/**
 * `CLIENTS` clients crediting and debiting `members` through every daemon in turn for `ms`,
 * each adjustment with an Idempotency-Key: a request that gets no answer or a 503 is sent again
 * with the same key to the next daemon (as a client behind a balancer would), so each
 * adjustment's effect is known exactly once.
 */
export async function load(
  daemons: () => DaemonProcess[],
  authorization: string,
  members: number[],
  ms: number,
  during?: () => Promise<void>,
): Promise<LoadResult> {
  const effects = new Map(members.map((m) => [m, 0]));
  const answers = new Map<string, number>();
  const note = (key: string) => answers.set(key, (answers.get(key) ?? 0) + 1);
  let acknowledged = 0;
  const started = Date.now();
  const end = started + ms;
  const client = async (k: number) => {
    let turn = k;
    while (Date.now() < end) {
      const member = members[Math.floor(Math.random() * members.length)];
      const cents = 1 + Math.floor(Math.random() * 500);
      const type = Math.random() < 0.5 ? 'credit' : 'debit';
      const key = randomUUID();
      const json = { member_id: member, type, amount: (cents / 100).toFixed(2), note: 'galera load', allow_negative: true };
      for (let attempt = 0; ; attempt++) {
        const list = daemons();
        const d = list[turn++ % list.length];
        const res = await d
          .request('POST', `${NS}/ledger/adjustments`, { json, headers: { authorization, 'idempotency-key': key } })
          .catch((err: Error) => ({ status: 0, body: { code: err.name } }));
        if (res.status === 201) {
          acknowledged++;
          effects.set(member, effects.get(member)! + (type === 'credit' ? cents : -cents));
          break;
        }
        note(`${res.status} ${res.body?.code ?? ''}`.trim());
        if (attempt >= 20) throw new Error(`adjustment ${key} not acknowledged after ${attempt + 1} tries: ${res.status} ${JSON.stringify(res.body)}`);
        if (!(res.status === 503 || res.status === 0)) throw new Error(`adjustment ${key}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  };
  await Promise.all([...Array.from({ length: CLIENTS }, (_, k) => client(k)), during?.()]);
  return { acknowledged, effects, answers, seconds: (Date.now() - started) / 1000 };
}
