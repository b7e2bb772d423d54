/**
 * The spend meter's and the spend pool's arithmetic (model/evaluation/spend-ledger.ts), as tables: the reports in order, the
 * totals and the verdict after. The workflows that run the protocol are tested in test/integration/spend-*.
 */
import { type Spend } from '../../model/evaluation/spend-cap';
import { PoolLedger, SpendTotal } from '../../model/evaluation/spend-ledger';

const s = (costUsd: number, tokens: number, unmetered = 0): Spend => ({ costUsd, tokens, unmetered });
const task = (name: string | undefined, spend: Spend) => ({ ...spend, ...(name !== undefined ? { task: name } : {}) });

test.each([
  // reports (task name, spend), the total after, the cap's verdict
  ['one task', [task('a', s(1, 10))], s(1, 10), null],
  ['two tasks add up', [task('a', s(1, 10)), task('b', s(2, 5, 1))], s(3, 15, 1), 'max_cost_usd $3.00 reached ($3.0000 spent)'],
  ['a task reported again counts once', [task('a', s(1, 10)), task('a', s(1, 10))], s(1, 10), null],
  ['a bigger total for the same task adds the difference', [task('a', s(1, 10)), task('a', s(2.5, 30))], s(2.5, 30), null],
  ['a smaller total for the same task adds nothing', [task('a', s(2, 30)), task('a', s(1, 10))], s(2, 30), null],
  ['a report without a task name adds all it says', [task(undefined, s(1, 10)), task(undefined, s(1, 10))], s(2, 20), null],
  ['tokens reach their cap', [task('a', s(0, 600)), task('b', s(0, 400))], s(0, 1000), 'max_tokens 1000 reached (1000 spent)'],
])('%s', (_name, reports, total, reached) => {
  const t = new SpendTotal();
  for (const r of reports) t.add(r);
  expect(t.spent).toEqual(total);
  expect(t.reachedOf({ maxCostUsd: 3, maxTokens: 1000 })).toBe(reached);
});

test('a continued run starts from the total it carried, and counts each task of its own once', () => {
  const t = new SpendTotal(s(2.9, 0));
  expect(t.reachedOf({ maxCostUsd: 3 })).toBeNull();
  t.add(task('a', s(0.1, 0)));
  t.add(task('a', s(0.1, 0)));
  expect(t.spent.costUsd).toBeCloseTo(3);
  expect(t.reachedOf({ maxCostUsd: 3 })).toMatch(/^max_cost_usd \$3.00 reached/);
});

type Event = ['join' | 'leave', string] | ['spend', string, string | undefined, Spend];

test.each([
  // events, then: which spend reached the cap (its index among the events, or null), total, spentBy, members
  [
    'members share the cap; the spend that reaches it says so, once',
    [
      ['join', 'e1'],
      ['join', 'e2'],
      ['spend', 'e1', 'a', s(1, 0)],
      ['spend', 'e2', 'a', s(1, 0)],
      ['spend', 'e2', 'b', s(1, 0)],
    ],
    4,
    s(3, 0),
    { e1: { costUsd: 1, tokens: 0 }, e2: { costUsd: 2, tokens: 0 } },
    ['e1', 'e2'],
  ],
  [
    "a member's task reported again (it was reset) counts once",
    [
      ['join', 'e1'],
      ['spend', 'e1', 'a', s(1, 5)],
      ['spend', 'e1', 'a', s(1, 5)],
    ],
    null,
    s(1, 5),
    { e1: { costUsd: 1, tokens: 5 } },
    ['e1'],
  ],
  [
    "once a member has left, its reports count in full (its tasks' totals are dropped)",
    [
      ['join', 'e1'],
      ['spend', 'e1', 'a', s(1, 0)],
      ['leave', 'e1'],
      ['spend', 'e1', 'a', s(1, 0)],
    ],
    null,
    s(2, 0),
    { e1: { costUsd: 2, tokens: 0 } },
    [],
  ],
  [
    'a spend from an evaluation that never joined counts, with its own share',
    [['spend', 'e9', 'a', s(0.5, 0)]],
    null,
    s(0.5, 0),
    { e9: { costUsd: 0.5, tokens: 0 } },
    [],
  ],
] as [string, Event[], number | null, Spend, Record<string, unknown>, string[]][])(
  'pool: %s',
  (_name, events, reachedAt, total, spentBy, members) => {
    const ledger = new PoolLedger({ maxCostUsd: 3, pool: 'batch' });
    const reachedBy: number[] = [];
    events.forEach((e, i) => {
      if (e[0] === 'spend') {
        if (ledger.add(e[1], task(e[2], e[3]))) reachedBy.push(i);
      } else if (e[0] === 'join') ledger.join(e[1]);
      else ledger.leave(e[1]);
    });
    expect(reachedBy).toEqual(reachedAt === null ? [] : [reachedAt]);
    expect(ledger.reached).toBe(reachedAt === null ? null : 'max_cost_usd $3.00 reached ($3.0000 spent in spend pool batch)');
    expect(ledger.spent).toEqual(total);
    expect(ledger.spentBy).toEqual(spentBy);
    expect([...ledger.members]).toEqual(members);
  },
);

test('the pool closes once its cap is reached and no member runs; its counts carry over to the next run whole', () => {
  const ledger = new PoolLedger({ maxTokens: 10, pool: 'batch' });
  ledger.join('e1');
  ledger.add('e1', task('a', s(0, 10)));
  expect(ledger.closable).toBe(false);
  const next = new PoolLedger({ maxTokens: 10, pool: 'batch' }, ledger.counts());
  expect(next.counts()).toEqual(ledger.counts());
  next.add('e1', task('a', s(0, 10))); // counted in the run before
  expect(next.spent).toEqual(s(0, 10));
  next.leave('e1');
  expect(next.closable).toBe(true);
});
