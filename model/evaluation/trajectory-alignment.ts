/**
 * Two trajectories of one task side by side, step by step: step i of A beside step i of B, each pair marked the
 * same or different by what the step did (the tool calls and their arguments; for a step without tool calls, its
 * message), and the first pair that differs marked as where the two runs diverged.
 */
import { canonicalJson } from './identity';
import type { ContentPart, Step } from '../harbor/atif-trajectory';

export interface AlignedPair {
  /** The step number (from 1) both sides are at. */
  stepId: number;
  a: Step | null;
  b: Step | null;
  same: boolean;
}

export interface Alignment {
  pairs: AlignedPair[];
  /** The step number of the first pair that differs, or null when every pair shown is the same. */
  divergedAt: number | null;
}

function messageText(m: string | ContentPart[]): string {
  return typeof m === 'string' ? m : m.map((p) => p.text ?? `[${p.type}]`).join('\n');
}

/** What a step did, as a string to compare: its source and tool calls (name and arguments), else its message. */
function stepAction(s: Step): string {
  const calls = s.tool_calls ?? [];
  const did = calls.length
    ? calls.map((c) => `${c.function_name}(${canonicalJson(c.arguments)})`).join('; ')
    : messageText(s.message).trim();
  return `${s.source}: ${did}`;
}

/** Steps `offset + 1` … of A and B, paired by number; `divergedAt` among them. */
export function alignSteps(a: Step[], b: Step[], offset: number): Alignment {
  const n = Math.max(a.length, b.length);
  const pairs: AlignedPair[] = [];
  let divergedAt: number | null = null;
  for (let i = 0; i < n; i++) {
    const sa = a[i] ?? null;
    const sb = b[i] ?? null;
    const same = sa !== null && sb !== null && stepAction(sa) === stepAction(sb);
    if (!same && divergedAt === null) divergedAt = offset + i + 1;
    pairs.push({ stepId: offset + i + 1, a: sa, b: sb, same });
  }
  return { pairs, divergedAt };
}
