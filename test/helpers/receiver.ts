// A webhook receiver on 127.0.0.1 (a real socket: the outbound guard's connection is the point)
// that records what it is sent and answers as the test says: a status, or never (a hang).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What the receiver does with the next request: answer `status`, `hang` (never answer), or `large` (200 with a 1 MB page). */
export type Answer = number | 'hang' | 'large';

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order; after them, `fallback`. */
  answers: Answer[];
  fallback: Answer;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: Receiver = { url: '', received: [], answers: [], fallback: 204, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = receiver.answers.length ? receiver.answers.shift()! : receiver.fallback;
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (answer === 'large') return void res.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.alloc(1024 * 1024, 'x'));
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/**
 * Verifies a delivery as a receiver would, written from the Standard Webhooks specification
 * (not with the sender's code): the key is the base64 after `whsec_`; the signed content is
 * `<webhook-id>.<webhook-timestamp>.<body>`; `webhook-signature` is a space-separated list of
 * `v1,<base64 HMAC-SHA256>`, any of which may match; the timestamp must be within `toleranceSeconds`.
 */
export function verifyStandardWebhook(secret: string, r: Received, nowSeconds: number, toleranceSeconds = 300): boolean {
  const id = r.headers['webhook-id'];
  const timestamp = r.headers['webhook-timestamp'];
  const signatures = r.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  if (!secret.startsWith('whsec_')) return false;
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${r.body}`)
    .digest();
  return signatures.split(' ').some((entry) => {
    const [version, sig] = entry.split(',', 2);
    if (version !== 'v1' || !sig) return false;
    const given = Buffer.from(sig, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
