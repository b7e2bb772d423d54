/**
 * ATIF trajectories and trial dirs for the viewer's tests: a home with `runs/<eval>/<run>/jobs/<task>/<trial>`
 * holding result.json, agent/trajectory.json and verifier output, as Harbor writes them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface StepSpec {
  /** Text in the message, the tool call's argument and its output (default: numbered filler). */
  text?: string;
  command?: string;
  output?: string;
}

/** Step `n` (from 1): odd steps are the agent's (a tool call, its result, tokens and cost), even ones the user's. */
export function atifStep(n: number, spec: StepSpec = {}): Record<string, unknown> {
  if (n === 1) return { step_id: 1, source: 'user', message: spec.text ?? 'Fix the failing test in src/parse.py.' };
  const id = `call_${n}`;
  return {
    step_id: n,
    timestamp: new Date(Date.UTC(2026, 9, 1, 12, 0, n % 60)).toISOString(),
    source: 'agent',
    model_name: 'anthropic/claude-sonnet-4-5',
    message: spec.text ?? `Step ${n}: looking at the parser.`,
    reasoning_content: `Reasoning for step ${n}.`,
    tool_calls: [{ tool_call_id: id, function_name: 'bash', arguments: { command: spec.command ?? `grep -n parse src/parse.py # ${n}` } }],
    observation: { results: [{ source_call_id: id, content: spec.output ?? `src/parse.py:${n}: def parse(line):` }] },
    metrics: { prompt_tokens: 1000 + n, completion_tokens: 50 + (n % 7), cached_tokens: 800, cost_usd: 0.0012 },
  };
}

export function atifTrajectory(steps: Record<string, unknown>[], agentName = 'claude-code'): Record<string, unknown> {
  return {
    schema_version: 'ATIF-v1.6',
    session_id: 'session-1',
    agent: { name: agentName, version: '2.1.3', model_name: 'anthropic/claude-sonnet-4-5' },
    steps,
    final_metrics: {
      total_prompt_tokens: 123456,
      total_completion_tokens: 7890,
      total_cached_tokens: 100000,
      total_cost_usd: 0.42,
      total_steps: steps.length,
    },
  };
}

/** Writes a trajectory of `n` generated steps, step by step (never one big string), padding each with `pad` chars. */
export function writeLargeTrajectory(file: string, n: number, pad = 0): void {
  const fd = fs.openSync(file, 'w');
  const filler = 'x'.repeat(pad);
  fs.writeSync(fd, '{"schema_version": "ATIF-v1.6", "agent": {"name": "claude-code", "version": "2.1.3"}, "steps": [');
  for (let i = 1; i <= n; i++)
    fs.writeSync(fd, `${i > 1 ? ',' : ''}${JSON.stringify(atifStep(i, pad ? { output: `${i} ${filler}` } : {}))}`);
  fs.writeSync(fd, `], "final_metrics": {"total_steps": ${n}, "total_cost_usd": 1.5}}`);
  fs.closeSync(fd);
}

export interface TrialFiles {
  reward?: number;
  trajectory?: unknown;
  /** Raw trajectory text (for one that does not parse). */
  trajectoryText?: string;
  verifierOutput?: string;
  exception?: { type: string; message: string };
}

/** A trial dir under `<home>/runs/<evalId>/run-1/jobs/<task>/<trial>`; returns its path relative to the home. */
export function writeTrial(home: string, evalId: string, task: string, trial: string, f: TrialFiles): string {
  const rel = path.join('runs', evalId, 'run-1', 'jobs', task, trial);
  const dir = path.join(home, rel);
  fs.mkdirSync(path.join(dir, 'agent'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'verifier'), { recursive: true });
  const result = {
    task_name: task,
    trial_name: trial,
    agent_info: { name: 'claude-code', version: '2.1.3', model_info: { name: 'claude-sonnet-4-5', provider: 'anthropic' } },
    agent_result: { n_input_tokens: 182340, n_cache_tokens: 150112, n_output_tokens: 6120, cost_usd: 0.1432 },
    verifier_result: f.reward === undefined ? null : { rewards: { reward: f.reward } },
    exception_info: f.exception
      ? {
          exception_type: f.exception.type,
          exception_message: f.exception.message,
          exception_traceback: 'Traceback …',
          occurred_at: '2026-10-01T12:05:00Z',
        }
      : null,
    started_at: '2026-10-01T12:00:00Z',
    finished_at: '2026-10-01T12:06:00Z',
  };
  fs.writeFileSync(path.join(dir, 'result.json'), JSON.stringify(result));
  if (f.trajectoryText !== undefined) fs.writeFileSync(path.join(dir, 'agent', 'trajectory.json'), f.trajectoryText);
  else if (f.trajectory !== undefined) fs.writeFileSync(path.join(dir, 'agent', 'trajectory.json'), JSON.stringify(f.trajectory));
  if (f.reward !== undefined) fs.writeFileSync(path.join(dir, 'verifier', 'reward.txt'), `${f.reward}\n`);
  fs.writeFileSync(path.join(dir, 'verifier', 'test-stdout.txt'), f.verifierOutput ?? 'test_parse.py::test_quoted PASSED\n1 passed\n');
  return rel.split(path.sep).join('/');
}
