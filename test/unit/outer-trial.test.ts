/** What vero run adds to the outer harbor run: tool-call caps for known harnesses, one retry on transport errors only. */
import { agentOf, outerRetryArgs, toolTimeoutArgs } from '../../model/harbor/outer-trial';

test('tool-call caps per harness (ms), none for an unknown harness or 0; the retry names only the transport errors', () => {
  expect(agentOf(['-a', 'claude-code', '-m', 'x'])).toBe('claude-code');
  expect(agentOf(['--agent=opencode'])).toBe('opencode');
  expect(agentOf(['-e', 'docker'])).toBeUndefined();
  expect(toolTimeoutArgs('claude-code', 300)).toEqual(['--ae', 'BASH_DEFAULT_TIMEOUT_MS=300000', '--ae', 'BASH_MAX_TIMEOUT_MS=300000']);
  expect(toolTimeoutArgs('opencode', 120)).toEqual(['--ae', 'OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS=120000']);
  expect(toolTimeoutArgs('oracle', 300)).toEqual([]);
  expect(toolTimeoutArgs('claude-code', 0)).toEqual([]);
  expect(outerRetryArgs()).toEqual([
    '--max-retries',
    '1',
    '--retry-include',
    'StreamTerminatedError',
    '--retry-include',
    'ConnectionError',
  ]);
  expect(outerRetryArgs(0)).toEqual([]);
});
