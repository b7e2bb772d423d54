import * as fs from 'node:fs';
import type { DevServer } from '../../infra/dev-server';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __veroServer?: DevServer }).__veroServer;
  await server?.stop();
  if (process.env.VERO_TEST_SERVER_DIR) fs.rmSync(process.env.VERO_TEST_SERVER_DIR, { recursive: true, force: true });
}
