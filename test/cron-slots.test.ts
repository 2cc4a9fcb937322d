// The slot calculator against node-cron's own matcher and next-run computation: the slot a
// catch-up or `schedules list` computes must be the date node-cron hands a firing.
import cron from 'node-cron';
import { describe, expect, it } from 'vitest';
import { CronError, CronSlots, isTimeZone } from '../src/cron-slots.js';

const CASES: [string, string][] = [
  ['17 3 * * *', 'UTC'],
  ['*/15 * * * * *', 'Europe/Berlin'],
  ['0 */12 * * *', 'UTC'],
  ['0 0 L * *', 'America/New_York'],
  ['30 2 * * *', 'Europe/Berlin'],
  ['0 0 1 1 *', 'UTC'],
  ['0 9 * * 1#2', 'Asia/Kolkata'],
  ['0 9 * * 5L', 'Australia/Lord_Howe'],
  ['0 12 15W * *', 'UTC'],
  ['0 12 LW * *', 'Pacific/Chatham'],
  ['0 6 L-2 * *', 'UTC'],
  ['45 1 * * *', 'America/Sao_Paulo'],
  ['0 0 29 2 *', 'UTC'],
];

/** node-cron's next runs from `from`, one after another (its task answers from now only: walk its matcher). */
function nodeCronNext(expression: string, zone: string, count: number): Date[] {
  const task = cron.createTask(expression, () => {}, { timezone: zone });
  try {
    return task.getNextRuns(count);
  } finally {
    void task.destroy();
  }
}

describe('CronSlots', () => {
  for (const [expression, zone] of CASES) {
    it(`finds the same next slots as node-cron for "${expression}" in ${zone}`, () => {
      const slots = new CronSlots(expression, zone);
      const now = new Date();
      const expected = nodeCronNext(expression, zone, 4);
      // Both walk from "now": start ours from a second before node-cron's first, so a second
      // boundary crossed between the two calls cannot shift the sequence.
      const ours: Date[] = [slots.next(new Date(expected[0].getTime() - 1000))!];
      while (ours.length < 4) ours.push(slots.next(ours.at(-1)!)!);
      expect(ours.map((d) => d.toISOString())).toEqual(expected.map((d) => d.toISOString()));
      expect(slots.next(now)!.getTime()).toBeGreaterThan(now.getTime() - 1000);
    });

    it(`steps back through the same slots for "${expression}" in ${zone}`, () => {
      const slots = new CronSlots(expression, zone);
      const forward = nodeCronNext(expression, zone, 4);
      // The slot before each one is the one node-cron gave before it; a slot is its own latest.
      for (let i = 1; i < forward.length; i++) {
        expect(slots.previous(new Date(forward[i].getTime() - 1))!.toISOString()).toBe(forward[i - 1].toISOString());
        expect(slots.previous(forward[i])!.toISOString()).toBe(forward[i].toISOString());
      }
      const task = cron.createTask(expression, () => {}, { timezone: zone });
      try {
        const prev = slots.previous(new Date())!;
        expect(task.match(prev)).toBe(true);
        expect(slots.matches(prev.getTime())).toBe(true);
      } finally {
        void task.destroy();
      }
    });
  }

  it('skips a wall time that does not exist when the clocks go forward', () => {
    // Europe/Berlin went from 02:00 to 03:00 on 2026-03-29: 02:30 did not happen that day.
    const slots = new CronSlots('30 2 * * *', 'Europe/Berlin');
    expect(slots.next(new Date('2026-03-28T12:00:00Z'))!.toISOString()).toBe('2026-03-30T00:30:00.000Z');
    expect(slots.previous(new Date('2026-03-30T00:00:00Z'))!.toISOString()).toBe('2026-03-28T01:30:00.000Z');
  });

  it('maps a wall time the clocks go back over to one instant, as node-cron does', () => {
    // America/New_York went from 02:00 EDT back to 01:00 EST on 2026-11-01: 01:30 happened twice.
    const slots = new CronSlots('30 1 * * *', 'America/New_York');
    const next = slots.next(new Date('2026-10-31T12:00:00Z'))!;
    // node-cron 4.6 picks the first (EDT) 01:30.
    expect(next.toISOString()).toBe('2026-11-01T05:30:00.000Z');
    // One slot that day, not two, and stepping back from after both finds the same one.
    expect(slots.next(next)!.toISOString()).toBe('2026-11-02T06:30:00.000Z');
    expect(slots.previous(new Date('2026-11-01T12:00:00Z'))!.toISOString()).toBe(next.toISOString());
  });

  it('computes the same slot from clocks a few seconds apart', () => {
    const slots = new CronSlots('0 * * * *', 'UTC');
    for (const at of ['2026-05-01T10:00:00.000Z', '2026-05-01T10:00:03.200Z', '2026-05-01T10:00:07.900Z', '2026-05-01T10:59:58.000Z']) {
      expect(slots.previous(new Date(at))!.toISOString()).toBe('2026-05-01T10:00:00.000Z');
    }
  });

  it('finds no slot after the floor when the latest one is older', () => {
    const slots = new CronSlots('0 3 * * *', 'UTC');
    expect(slots.previous(new Date('2026-05-03T10:00:00Z'), new Date('2026-05-03T03:00:00Z'))).toBeNull();
    expect(slots.previous(new Date('2026-05-03T10:00:00Z'), new Date('2026-05-02T03:00:00Z'))!.toISOString()).toBe('2026-05-03T03:00:00.000Z');
    // A yearly slot is found across a long gap, and not at all below a floor close to now.
    const yearly = new CronSlots('0 0 1 1 *', 'UTC');
    expect(yearly.previous(new Date('2026-12-31T00:00:00Z'))!.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(yearly.previous(new Date('2026-12-31T00:00:00Z'), new Date('2026-06-01T00:00:00Z'))).toBeNull();
  });

  it('answers no slot for an expression that matches no day', () => {
    // The first of a month is never its fifth Monday (each field alone is fine).
    const never = new CronSlots('0 0 1 * 1#5', 'UTC');
    expect(never.next(new Date('2026-01-01T00:00:00Z'))).toBeNull();
    expect(never.previous(new Date('2026-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'))).toBeNull();
  });

  it('refuses a bad expression or time zone with the reason', () => {
    expect(() => new CronSlots('61 * * * *', 'UTC')).toThrow(CronError);
    expect(() => new CronSlots('61 * * * *', 'UTC')).toThrow(/"61 \* \* \* \*" is not a cron expression: 61 is a invalid expression for minute/);
    expect(() => new CronSlots('every day', 'UTC')).toThrow(/is not a cron expression/);
    expect(() => new CronSlots('0 0 31 2 *', 'UTC')).toThrow(/impossible day of month/);
    expect(() => new CronSlots('0 3 * * *', 'Mars/Olympus')).toThrow(/"Mars\/Olympus" is not a time zone/);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('nowhere')).toBe(false);
    // Answers are remembered for known zones only: asked again, an unknown one is still unknown.
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('nowhere')).toBe(false);
    expect(() => new CronSlots('0 3 * * *', 'Mars/Olympus')).toThrow(/"Mars\/Olympus" is not a time zone/);
  });

  it('tells slots from other instants', () => {
    const slots = new CronSlots('0 3 * * *', 'UTC');
    expect(slots.matches(Date.parse('2026-05-03T03:00:00Z'))).toBe(true);
    expect(slots.matches(Date.parse('2026-05-03T03:00:00.500Z'))).toBe(false);
    expect(slots.matches(Date.parse('2026-05-03T03:01:00Z'))).toBe(false);
  });
});
