// Who could own an order without a member: the clicks on its shop within the network's cookie
// window before the sale, one candidate per member, ranked by the evidence, strongest first:
// 1. the network's own click time (`clicked_at`, reported by Awin, Admitad and impact.com) within
//    two minutes of the click: the network counted this very click;
// 2. the device: the click's address prefix is the one the network reports for the click (Admitad
//    `click_user_ip`, an Awin notification's `ip`), reduced the same way;
// 3. closeness to the sale: the shorter the gap, the likelier (networks credit the last click).
// Each candidate carries its best click as evidence, with how many clicks the member made there
// in the window and from how many devices (user-agent hashes).
import { addressPrefix } from './device.js';
import type { Click } from './store.js';

/** What ranking reads of an order (an `Order` fits). */
export interface CandidateOrder {
  id: number;
  network: string;
  advertiser: string | null;
  member: { id: number } | null;
  clicked_at: string | null;
  event_at: string | null;
  created_at: string;
  raw?: unknown;
}

export interface Candidate {
  member: { id: number; login: string; display_name: string };
  /** The member's most telling click. */
  click: Click;
  /** Seconds from that click to the sale. */
  gap_seconds: number;
  evidence: {
    /** The network's click time is within two minutes of the click. */
    click_time_match: boolean;
    /** The click's address prefix is the one the network reports for the click. */
    same_address: boolean;
    /** The last click on the shop before the sale, of anyone. */
    last_click: boolean;
  };
  /** The member's clicks on the shop in the window, and the distinct devices (user-agent hashes) among them. */
  clicks: number;
  devices: number;
}

export interface Candidates {
  order_id: number;
  sale_at: string;
  window_days: number;
  items: Candidate[];
}

const CLICK_TIME_TOLERANCE_MS = 120_000;
const IP_KEYS = ['click_user_ip', 'ip', 'clickIp', 'ClickIp', 'IpAddress'];

/** The address the network reports for the order's click, reduced to its prefix. */
function reportedPrefix(raw: unknown): string | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  for (const key of IP_KEYS) {
    const v = (raw as Record<string, unknown>)[key];
    if (typeof v === 'string') {
      const p = addressPrefix(v);
      if (p) return p;
    }
  }
  return null;
}

export function rankCandidates(order: CandidateOrder, clicks: Click[], saleAt: Date, windowDays: number): Candidates {
  const clickedAt = order.clicked_at ? new Date(order.clicked_at).getTime() : null;
  const prefix = reportedPrefix(order.raw);
  const lastId = clicks[0]?.id;
  const score = (c: Click) => {
    const at = new Date(c.created_at).getTime();
    return {
      click_time_match: clickedAt !== null && Math.abs(at - clickedAt) <= CLICK_TIME_TOLERANCE_MS,
      same_address: prefix !== null && c.ip_prefix === prefix,
      last_click: c.id === lastId,
      gap: saleAt.getTime() - at,
    };
  };
  const better = (a: ReturnType<typeof score>, b: ReturnType<typeof score>) =>
    a.click_time_match !== b.click_time_match ? a.click_time_match : a.same_address !== b.same_address ? a.same_address : a.gap < b.gap;
  const byMember = new Map<number, { click: Click; s: ReturnType<typeof score>; clicks: number; devices: Set<string> }>();
  for (const c of clicks) {
    if (!c.member) continue;
    const s = score(c);
    const seen = byMember.get(c.member.id);
    if (!seen) byMember.set(c.member.id, { click: c, s, clicks: 1, devices: new Set(c.ua_hash ? [c.ua_hash] : []) });
    else {
      seen.clicks++;
      if (c.ua_hash) seen.devices.add(c.ua_hash);
      if (better(s, seen.s)) Object.assign(seen, { click: c, s });
    }
  }
  const items = [...byMember.values()]
    .sort((a, b) => (better(a.s, b.s) ? -1 : better(b.s, a.s) ? 1 : 0))
    .map(
      ({ click, s, clicks: n, devices }): Candidate => ({
        member: click.member!,
        click,
        gap_seconds: Math.round(s.gap / 1000),
        evidence: { click_time_match: s.click_time_match, same_address: s.same_address, last_click: s.last_click },
        clicks: n,
        devices: devices.size,
      }),
    );
  return { order_id: order.id, sale_at: saleAt.toISOString(), window_days: windowDays, items };
}
