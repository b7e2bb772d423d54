/** Starting an evaluation: start it, or attach to the running one, or return the completed one. */
import type { Client, WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { EvalInput } from '../model/evaluation/input';
import { VeroCandidate, VeroCandidateRef, VeroConfigDigest, veroStatus, VeroTaskSource } from '../model/evaluation/search-attributes';
import { evaluateCandidate } from '../workflows';
import { ensureSpendPool } from './spend-pools';
import { describeIfAny } from './connection';

export interface StartOutcome {
  handle: WorkflowHandle<typeof evaluateCandidate>;
  /** started: a new run; attached: joined a running one; existing: returned a completed one. */
  mode: 'started' | 'attached' | 'existing';
  /**
   * The home of the evaluation attached to, when it is not this config's (`home` is operational, so it is not
   * part of the evaluation id): its files are there.
   */
  otherHome?: string;
}

/** Starts the evaluation, or attaches to the running one, or returns the completed one (unless `force`). */
export async function startOrAttach(client: Client, input: EvalInput, taskQueue: string, force = false): Promise<StartOutcome> {
  const prev = await describeIfAny(client, input.evalId);
  const prevHome = typeof prev?.memo?.home === 'string' ? prev.memo.home : undefined;
  const otherHome = prevHome !== undefined && prevHome !== input.home ? { otherHome: prevHome } : {};
  if (prev?.status.name === 'RUNNING') return { handle: client.workflow.getHandle(input.evalId), mode: 'attached', ...otherHome };
  if (prev?.status.name === 'COMPLETED' && !force)
    return { handle: client.workflow.getHandle(input.evalId), mode: 'existing', ...otherHome };
  if (input.settings.spendCap?.pool) await ensureSpendPool(client, input.settings.spendCap, taskQueue);
  const source = input.settings.source.path ?? input.settings.source.dataset ?? '';
  const options = {
    workflowId: input.evalId,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    memo: { home: input.home, candidateRef: input.candidateRef },
    typedSearchAttributes: [
      { key: VeroCandidate, value: input.candidate },
      veroStatus('queued'),
      { key: VeroTaskSource, value: source },
      { key: VeroConfigDigest, value: input.configDigest },
      { key: VeroCandidateRef, value: input.candidateRef },
    ],
    staticSummary: `candidate ${input.candidateRef} (${input.candidate.slice(0, 12)}) on ${input.tasks.length} task(s)`.slice(0, 200),
    staticDetails: [
      `**candidate** \`${input.candidate}\` (${input.candidateRef})`,
      `**tasks** ${input.tasks.length} from \`${source}\``,
      `**agent** \`${input.settings.harbor.agent}\`${input.settings.harbor.model ? ` model \`${input.settings.harbor.model}\`` : ''}, attempts ${input.settings.harbor.n_attempts}, retries ${input.settings.harbor.max_retries}`,
    ].join('\n\n'),
  } satisfies WorkflowStartOptions<typeof evaluateCandidate>;
  const handle = await client.workflow.start(evaluateCandidate, options).catch((e: unknown) => {
    // A server whose search attributes were registered before VeroCandidateRef existed ("… has no mapping
    // defined for search attribute VeroCandidateRef", in the error's cause): start without it.
    if (!`${String(e)} ${e instanceof Error ? String(e.cause) : ''}`.includes(VeroCandidateRef.name)) throw e;
    const typedSearchAttributes = options.typedSearchAttributes.filter((a) => a.key !== VeroCandidateRef);
    return client.workflow.start(evaluateCandidate, { ...options, typedSearchAttributes });
  });
  return { handle, mode: 'started' };
}
