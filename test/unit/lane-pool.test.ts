/** The lane pool's arithmetic, as a table: counts before, the event, counts after; and its invariant over sequences. */
import { concurrencyChanged, grantAll, type LaneCounts, lanesTakenBack } from '../../model/evaluation/lane-pool';

const c = (concurrency: number, freed: number, owed: number): LaneCounts => ({ concurrency, freed, owed });

test.each([
  // before, lanes coming back, after
  [c(3, 0, 0), 1, c(3, 1, 0)],
  [c(3, 0, 2), 1, c(3, 0, 1)], // pays what is owed first
  [c(3, 0, 2), 3, c(3, 1, 0)], // pays it all, the rest is freed
  [c(1, 0, 0), 0, c(1, 0, 0)],
])('%o takes back %i lane(s): %o', (before, lanes, after) => {
  expect(lanesTakenBack(before, lanes)).toEqual(after);
});

test.each([
  // before, new concurrency, after
  [c(2, 1, 0), 4, c(4, 3, 0)], // raised: more freed lanes
  [c(2, 0, 3), 4, c(4, 0, 1)], // raised while owed: the debt is forgiven first
  [c(2, 0, 1), 5, c(5, 2, 0)],
  [c(4, 3, 0), 2, c(2, 1, 0)], // lowered: idle lanes go first
  [c(4, 1, 0), 1, c(1, 0, 2)], // lowered below what runs: the rest is owed
  [c(3, 0, 0), 3, c(3, 0, 0)],
])('%o set to concurrency %i: %o', (before, concurrency, after) => {
  expect(concurrencyChanged(before, concurrency)).toEqual(after);
});

test('granting hands out every freed lane', () => {
  expect(grantAll(c(3, 2, 1))).toEqual({ counts: c(3, 0, 1), lanes: 2 });
});

test('held + freed − owed = concurrency, whatever the sequence of grants, returns and concurrency changes', () => {
  let seed = 11;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let run = 0; run < 200; run++) {
    let counts = c(1 + random(5), 0, 0);
    counts = { ...counts, freed: counts.concurrency };
    let held = 0;
    for (let step = 0; step < 50; step++) {
      const event = random(3);
      if (event === 0) {
        const g = grantAll(counts);
        counts = g.counts;
        held += g.lanes;
      } else if (event === 1 && held > 0) {
        const lanes = 1 + random(held);
        held -= lanes;
        counts = lanesTakenBack(counts, lanes);
      } else if (event === 2) counts = concurrencyChanged(counts, 1 + random(8));
      expect(held + counts.freed - counts.owed).toBe(counts.concurrency);
      expect(Math.min(counts.freed, counts.owed)).toBeGreaterThanOrEqual(0);
    }
  }
});
