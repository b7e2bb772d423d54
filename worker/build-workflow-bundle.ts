/** `npm run build`'s last step: the workflow bundle workers load instead of running webpack (workflow-bundle.ts). */
import { buildWorkflowBundle } from './workflow-bundle';

const t0 = performance.now();
buildWorkflowBundle().then(
  ({ bundleFile, inputs }) => {
    process.stderr.write(`workflow bundle: ${bundleFile} from ${inputs} files in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  },
  (e: unknown) => {
    process.stderr.write(`workflow bundle failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  },
);
