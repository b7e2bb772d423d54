/**
 * Starts ONE real Temporal dev server (headless, SQLite in a temp dir, the project's search attributes) for
 * the whole test run. Tests connect to TEMPORAL_TEST_ADDRESS.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDevServer } from '../../infra/dev-server';
import { findTemporalCli } from '../../infra/temporal-cli';

export default async function globalSetup(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-test-temporal-'));
  const temporalCli = findTemporalCli();
  const server = await startDevServer({
    temporalCli,
    dbFile: path.join(dir, 'temporal.db'),
    logFile: path.join(dir, 'server.log'),
    startTimeoutMs: 60_000,
  });
  process.env.TEMPORAL_TEST_ADDRESS = server.address;
  process.env.TEMPORAL_CLI_PATH = temporalCli;
  process.env.VERO_TEST_SERVER_DIR = dir;
  // Builds seal with a secret of this run's, not the user's home's (removed with the dir).
  process.env.VERO_SEAL_SECRET_FILE = path.join(dir, 'seal-secret');
  (globalThis as { __veroServer?: typeof server }).__veroServer = server;
}
