/**
 * The workflow bundle built once by `npm run build` (dist/workflow-bundle.js), so a worker does not run webpack
 * at every start (≈ 2–4 s of CPU each time: `vero dev`, `vero worker`, every sidecar's `vero serve`).
 *
 * Beside it, dist/workflow-bundle.json lists every file webpack read for code (the compiled workflows and model,
 * the SDK's workflow runtime, zod, @noble/hashes, their package.json files; no source maps) with its sha256, and for each compiled file the TypeScript source it came
 * from. A worker uses the bundle only when every listed file is as it was: a rebuilt or edited module means the
 * bundle is stale, and the worker bundles from source as before (and says why at debug level).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { writeFileDurable } from '../infra/atomic-file';
import { PROJECT_ROOT } from '../infra/package-root';

const BUNDLE_FILE = 'workflow-bundle.js';
const MANIFEST_FILE = 'workflow-bundle.json';

/** Where `npm run build` puts the bundle and its manifest. */
const builtDir = (root: string) => path.join(root, 'dist');

const FileDigest = z.object({ path: z.string(), sha256: z.string() });
const Manifest = z.object({
  /** Every file webpack read, relative to the package root. */
  inputs: z.array(FileDigest),
  /** The TypeScript source of each compiled input under dist/ (present in a checkout, not in the package). */
  sources: z.array(FileDigest),
});
type Manifest = z.infer<typeof Manifest>;

const sha256Of = (file: string): string | null => {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return null;
  }
};

const digestOf = (root: string, abs: string) => ({ path: path.relative(root, abs), sha256: sha256Of(abs) ?? '' });

/**
 * A file whose change changes what the bundle does. Source maps, and the TypeScript sources the SDK ships for
 * them, only change stack traces (and the compiled task's copy of the package leaves the maps out).
 */
function isCode(file: string): boolean {
  if (file.endsWith('.map') || (file.endsWith('.ts') && file.includes(`${path.sep}node_modules${path.sep}`))) return false;
  return fs.statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
}

/** dist/a/b.js → a/b.ts, when that source exists. */
function sourceOf(root: string, rel: string): string | null {
  const parts = rel.split(path.sep);
  if (parts[0] !== 'dist' || !rel.endsWith('.js')) return null;
  const ts = path.join(root, ...parts.slice(1)).replace(/\.js$/, '.ts');
  return fs.existsSync(ts) ? ts : null;
}

/** Bundles `root`/dist/workflows and writes the bundle and its manifest into `dir` (default: `root`/dist). */
export async function buildWorkflowBundle(
  root: string = PROJECT_ROOT,
  dir: string = builtDir(root),
): Promise<{ bundleFile: string; inputs: number }> {
  const read = new Set<string>();
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(root, 'dist', 'workflows'),
    logger: new DefaultLogger('WARN'),
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        {
          apply: (compiler) =>
            compiler.hooks.afterCompile.tap('vero-bundle-inputs', (compilation) => {
              for (const f of compilation.fileDependencies) if (isCode(f)) read.add(f);
            }),
        },
      ],
    }),
  });
  const inputs = [...read].sort().map((f) => digestOf(root, f));
  const sources = inputs.flatMap((i) => {
    const ts = sourceOf(root, i.path);
    return ts ? [digestOf(root, ts)] : [];
  });
  writeFileDurable(path.join(dir, BUNDLE_FILE), code, { fsync: false });
  writeFileDurable(path.join(dir, MANIFEST_FILE), `${JSON.stringify({ inputs, sources } satisfies Manifest, null, 1)}\n`, { fsync: false });
  return { bundleFile: path.join(dir, BUNDLE_FILE), inputs: inputs.length };
}

/**
 * The prebuilt bundle's path when it matches the files it was built from (and, with `checkSources`, their
 * TypeScript sources too: tests run the sources); otherwise why not.
 */
export function prebuiltWorkflowBundle(
  opts: { root?: string; dir?: string; checkSources?: boolean } = {},
): { codePath: string } | { stale: string } {
  const root = opts.root ?? PROJECT_ROOT;
  const dir = opts.dir ?? builtDir(root);
  const bundle = path.join(dir, BUNDLE_FILE);
  let manifest: Manifest;
  try {
    manifest = Manifest.parse(JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')));
  } catch {
    return { stale: `no prebuilt workflow bundle (${path.join(dir, MANIFEST_FILE)} missing or unreadable); npm run build makes it` };
  }
  if (!fs.existsSync(bundle)) return { stale: `${bundle} is missing` };
  const checked = opts.checkSources ? [...manifest.inputs, ...manifest.sources] : manifest.inputs;
  const changed = checked.find((f) => sha256Of(path.join(root, f.path)) !== f.sha256);
  if (changed) return { stale: `${changed.path} changed since the workflow bundle was built` };
  if (opts.checkSources && manifest.sources.length === 0) return { stale: 'the bundle records no TypeScript sources to check' };
  return { codePath: bundle };
}
