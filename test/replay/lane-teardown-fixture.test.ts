/**
 * The lane-teardown fixture keeps covering what it was recorded for (record-fixtures.ts, recordLaneTeardown): its
 * chunk's harbors signalled work-done, a lane started its next task while the last one tore down, and the history
 * holds the markers of both patches of workflows/chunk-teardowns.ts, so its replay runs that code as recorded.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LANE_TEARDOWN_PATCH, TEARDOWN_BOUND_PATCH } from '../../workflows/chunk-teardowns';
import { laneTeardownCoverage, type History } from './lane-teardown-history';

const fixture = path.join(__dirname, '..', 'fixtures', 'histories', 'evaluate-chunk.lane-teardown.json');

test('the lane-teardown chunk fixture holds work-done signals, a task started while another tore down, and both patches', () => {
  const { history } = JSON.parse(fs.readFileSync(fixture, 'utf8')) as { history: History };
  const seen = laneTeardownCoverage(history);
  expect(seen.patches).toEqual(expect.arrayContaining([LANE_TEARDOWN_PATCH, TEARDOWN_BOUND_PATCH]));
  expect(seen.workDone).toEqual(['count-words', 'fix-csv-parser', 'hello-world', 'sum-numbers']);
  // The first task's lane ran the second while the first's harbor tore down.
  expect(seen.startedWhileTearingDown).toContain('fix-csv-parser ← count-words');
  // The bound (2 × concurrency 1) was reached: the last task started beside two tearing down, once the first of
  // them had ended (the replay itself fails under another bound).
  expect(seen.startedWhileTearingDown).toEqual(expect.arrayContaining(['sum-numbers ← fix-csv-parser', 'sum-numbers ← hello-world']));
  expect(seen.startedWhileTearingDown).not.toContain('sum-numbers ← count-words');
});
