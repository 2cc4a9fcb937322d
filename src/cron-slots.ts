// Due times ("slots") of a cron expression in a time zone, computed from the expression alone:
// every daemon computes the same slot whatever its own clock says, which is what makes a slot a
// key two daemons can both claim and only one win. node-cron fires the schedules and hands each
// firing its slot, but computes only the next slot after *now*; catch-up needs the latest slot
// before a given time, and `schedules list` the next one. node-cron 4 does not expose either for
// an arbitrary date, so this module computes both from the fields node-cron's own parser returns
// (`cron.parse`), with node-cron's semantics: day of month AND day of week must both match (not
// the classic cron OR), `L`, `LW`, `15W`, `L-2`, `5L`, `1#2`; a local time that does not exist
// (spring forward) is skipped and an ambiguous one (fall back) maps to the instant node-cron
// picks. test/jobs/cron-slots.test.ts checks it against node-cron's own matcher.
import cron from 'node-cron';

/** Why an expression or zone is refused (the caller names the configuration key). */
export class CronError extends Error {}

interface Fields {
  seconds: number[];
  minutes: number[];
  hours: number[];
  days: (number | string)[];
  months: Set<number>;
  weekdays: (number | string)[];
}

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
/** Days searched at most (as node-cron): an expression matching no day in 100 years has no slot. */
const MAX_DAYS = 366 * 100;
/** A zone's offset changes by less than this within a day or two (DST shifts are 30 minutes to 2 hours). */
const DST_MARGIN_MS = 3 * 3_600_000;

const partsFormatters = new Map<string, Intl.DateTimeFormat>();
const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

function partsFormatter(zone: string): Intl.DateTimeFormat {
  let f = partsFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
      hour12: false,
    });
    partsFormatters.set(zone, f);
  }
  return f;
}

/** The wall-clock reading of `ms` in `zone`. */
export function localParts(ms: number, zone: string): LocalParts {
  const out: Record<string, string> = {};
  for (const p of partsFormatter(zone).formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = p.value;
  return {
    year: Number(out.year),
    month: Number(out.month),
    day: Number(out.day),
    hour: out.hour === '24' ? 0 : Number(out.hour),
    minute: Number(out.minute),
    second: Number(out.second),
    weekday: WEEKDAYS[out.weekday] ?? 0,
  };
}

/** The zone's offset from UTC at `ms`, in minutes. */
function offsetMinutes(ms: number, zone: string): number {
  let f = offsetFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'shortOffset' });
    offsetFormatters.set(zone, f);
  }
  const name = f.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT([+-])(\d{1,2})(?::(\d{2}))?$/.exec(name);
  if (!m) return 0;
  return (m[1] === '+' ? 1 : -1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

function sameWallTime(ms: number, zone: string, p: Omit<LocalParts, 'weekday'>): boolean {
  const q = localParts(ms, zone);
  return q.year === p.year && q.month === p.month && q.day === p.day && q.hour === p.hour && q.minute === p.minute && q.second === p.second;
}

/**
 * The instant a wall-clock time in `zone` stands for, chosen as node-cron chooses it: the guess
 * corrected by the offset at the guess, and when the offset differs there, whichever candidate
 * reads back as that wall time (the later one when neither does: a time in a DST gap).
 */
function wallTimeToMs(p: Omit<LocalParts, 'weekday'>, zone: string): number {
  const guess = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  const first = offsetMinutes(guess, zone);
  const c1 = guess - first * 60_000;
  const second = offsetMinutes(c1, zone);
  if (second === first) return c1;
  const c2 = guess - second * 60_000;
  if (sameWallTime(c1, zone, p)) return c1;
  if (sameWallTime(c2, zone, p)) return c2;
  return Math.max(c1, c2);
}

function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function weekdayOf(year: number, month: number, day: number): number {
  return new Date(Date.UTC(year, month - 1, day)).getUTCDay();
}

/** The weekday (Mon-Fri) nearest to `target` within its month (Quartz's `W`). */
function nearestWeekday(year: number, month: number, target: number): number {
  const last = lastDayOfMonth(year, month);
  if (target < 1 || target > last) return -1;
  const wd = weekdayOf(year, month, target);
  if (wd === 6) return target === 1 ? 3 : target - 1;
  if (wd === 0) return target === last ? target - 2 : target + 1;
  return target;
}

function dayOfMonthMatches(field: (number | string)[], year: number, month: number, day: number): boolean {
  for (const v of field) {
    if (v === day) return true;
    if (typeof v !== 'string') continue;
    if (v === 'L' && day === lastDayOfMonth(year, month)) return true;
    const w = /^(\d{1,2}|L)W$/.exec(v);
    if (w && nearestWeekday(year, month, w[1] === 'L' ? lastDayOfMonth(year, month) : Number(w[1])) === day) return true;
    const back = /^L-(\d{1,2})$/.exec(v);
    if (back && lastDayOfMonth(year, month) - Number(back[1]) === day) return true;
  }
  return false;
}

function dayOfWeekMatches(field: (number | string)[], year: number, month: number, day: number): boolean {
  const wd = weekdayOf(year, month, day);
  for (const v of field) {
    if (v === wd) return true;
    if (typeof v !== 'string') continue;
    const nth = /^([0-7])#([1-5])$/.exec(v);
    if (nth) {
      if (Number(nth[1]) % 7 === wd && Math.floor((day - 1) / 7) + 1 === Number(nth[2])) return true;
      continue;
    }
    const last = /^([0-7])L$/i.exec(v);
    if (last && Number(last[1]) % 7 === wd && day + 7 > lastDayOfMonth(year, month)) return true;
  }
  return false;
}

function shiftDay(year: number, month: number, day: number, by: number): { year: number; month: number; day: number } {
  const d = new Date(Date.UTC(year, month - 1, day + by));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** Zones found known: the configuration names the same few many times. Only known ones, so the set stays bounded by the runtime's zones. */
const knownZones = new Set<string>(['UTC']);

/**
 * Whether `zone` is an IANA time zone this runtime knows. UTC always is: answered without Intl,
 * whose first time zone loads the ICU zone data, which a command validating the default schedules
 * (all UTC) would otherwise pay for at every start.
 */
export function isTimeZone(zone: string): boolean {
  if (knownZones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return false;
  }
  knownZones.add(zone);
  return true;
}

/** A cron expression in a time zone: its slots before and after any instant. */
export class CronSlots {
  private readonly f: Fields;
  /** Times of day (seconds since local midnight) of the slots, ascending. */
  private readonly times: number[];

  /** Throws CronError on an expression node-cron refuses or an unknown time zone. */
  constructor(
    readonly expression: string,
    readonly timezone: string,
  ) {
    if (typeof expression !== 'string' || !cron.validate(expression)) {
      let detail = '';
      try {
        cron.parse(String(expression));
      } catch (err) {
        detail = `: ${(err as Error).message}`;
      }
      throw new CronError(`"${String(expression)}" is not a cron expression${detail}`);
    }
    if (!isTimeZone(timezone)) throw new CronError(`"${timezone}" is not a time zone (use an IANA name such as UTC or Europe/Berlin)`);
    const p = cron.parse(expression);
    this.f = {
      seconds: [...p.second].sort((a, b) => a - b),
      minutes: [...p.minute].sort((a, b) => a - b),
      hours: [...p.hour].sort((a, b) => a - b),
      days: p.dayOfMonth,
      months: new Set(p.month),
      weekdays: p.dayOfWeek,
    };
    const times: number[] = [];
    for (const h of this.f.hours) for (const m of this.f.minutes) for (const s of this.f.seconds) times.push(h * 3600 + m * 60 + s);
    this.times = times;
  }

  private dayMatches(year: number, month: number, day: number): boolean {
    return this.f.months.has(month) && dayOfMonthMatches(this.f.days, year, month, day) && dayOfWeekMatches(this.f.weekdays, year, month, day);
  }

  /** Whether `ms` (whole seconds) is a slot: its wall time in the zone matches every field. */
  matches(ms: number): boolean {
    if (ms % 1000 !== 0) return false;
    const p = localParts(ms, this.timezone);
    return this.f.seconds.includes(p.second) && this.f.minutes.includes(p.minute) && this.f.hours.includes(p.hour) && this.dayMatches(p.year, p.month, p.day);
  }

  /** The slot of `time` on a day, if it is one (a wall time in a DST gap usually is not). */
  private slotOn(year: number, month: number, day: number, time: number): number | null {
    const ms = wallTimeToMs({ year, month, day, hour: Math.floor(time / 3600), minute: Math.floor(time / 60) % 60, second: time % 60 }, this.timezone);
    return this.matches(ms) ? ms : null;
  }

  /**
   * Where a wall time of a day lies, give or take a DST shift: skips candidates far from the
   * reference without asking Intl (the zone's offset at the reference stands in for the day's).
   */
  private approx(year: number, month: number, day: number, time: number, offset: number): number {
    return Date.UTC(year, month - 1, day) + time * 1000 - offset * 60_000;
  }

  /** The first slot strictly after `after` (as node-cron's next run), or null within 100 years. */
  next(after: Date): Date | null {
    const base = Math.floor(after.getTime() / 1000) * 1000;
    const offset = offsetMinutes(base, this.timezone);
    const start = localParts(base, this.timezone);
    // From the day before (a DST shift can put a slot of that local day after `after`) onwards.
    let { year, month, day } = shiftDay(start.year, start.month, start.day, -1);
    for (let i = 0; i < MAX_DAYS; i++) {
      if (this.dayMatches(year, month, day)) {
        for (const time of this.times) {
          if (this.approx(year, month, day, time, offset) < base - DST_MARGIN_MS) continue;
          const ms = this.slotOn(year, month, day, time);
          if (ms !== null && ms > base) return new Date(ms);
        }
      }
      ({ year, month, day } = shiftDay(year, month, day, 1));
    }
    return null;
  }

  /**
   * The latest slot at or before `at`, or null when there is none after `notBefore` (exclusive;
   * default: 100 years back).
   */
  previous(at: Date, notBefore?: Date | null): Date | null {
    const limit = at.getTime();
    const floor = notBefore ? notBefore.getTime() : -Infinity;
    const offset = offsetMinutes(limit, this.timezone);
    const start = localParts(Math.floor(limit / 1000) * 1000, this.timezone);
    // From the day after (a DST shift can put a slot of that local day before `at`) backwards.
    let { year, month, day } = shiftDay(start.year, start.month, start.day, 1);
    for (let i = 0; i < MAX_DAYS; i++) {
      if (this.dayMatches(year, month, day)) {
        for (let k = this.times.length - 1; k >= 0; k--) {
          const time = this.times[k];
          if (this.approx(year, month, day, time, offset) > limit + DST_MARGIN_MS) continue;
          const ms = this.slotOn(year, month, day, time);
          if (ms !== null && ms <= limit) return ms > floor ? new Date(ms) : null;
        }
      }
      // Two days past the floor: no slot after it is left to find.
      if (Date.UTC(year, month - 1, day) < floor - 2 * 86_400_000) return null;
      ({ year, month, day } = shiftDay(year, month, day, -1));
    }
    return null;
  }
}
