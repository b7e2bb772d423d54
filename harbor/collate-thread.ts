/** A collation worker thread (collate-parallel.ts): scores the chunks it claims and sends back each one's rows. */
import { parentPort, workerData } from 'node:worker_threads';
import { type CollationThreadJob, scoreClaimedChunks } from './collate-parallel';

scoreClaimedChunks(workerData as CollationThreadJob, (chunk) => parentPort!.postMessage(chunk));
