/**
 * Failures a person causes by accident are said in one line on stderr with a meaningful exit code, never as a
 * stack trace: a busy port for `vero view`, `vero serve` and `vero dev`'s Web UI, `report -o` into a missing
 * directory. The real CLI, as a person runs it.
 */
import * as net from 'node:net';
import * as path from 'node:path';
import { setup } from '../helpers/sidecar';
import { tempDir } from '../helpers/fixtures';
import { runVero } from '../helpers/process';
import { address, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(120_000);

/** A port something else listens on, while `fn` runs. */
async function withBusyPort<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    return await fn((srv.address() as net.AddressInfo).port);
  } finally {
    await new Promise((r) => srv.close(r));
  }
}

const noStack = (stderr: string) => expect(stderr).not.toMatch(/^\s+at /m);

test('vero view on a busy port', async () => {
  await withBusyPort(async (port) => {
    const r = await runVero(['view', '--address', address(), '--port', String(port)], { VERO_HOME: tempDir() });
    expect(r.stderr).toContain(`error: --port: 127.0.0.1:${port} is already in use; pass another --port (0: any free port)`);
    noStack(r.stderr);
    expect(r.code).toBe(2);
  });
});

test('vero report -o into a missing directory', async () => {
  const out = path.join(tempDir(), 'no', 'such', 'report.html');
  const r = await runVero(['report', '--address', address(), '--all', '-o', out]);
  expect(r.stderr).toContain(`error: -o: ${out}: the directory ${path.dirname(out)} does not exist (create it first)`);
  noStack(r.stderr);
  expect(r.code).toBe(2);
});

test('vero dev with its Web UI port busy says so on stderr', async () => {
  await withBusyPort(async (uiPort) => {
    const db = path.join(tempDir(), 'temporal.db');
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as net.AddressInfo).port; // a free gRPC port
    await new Promise((r) => probe.close(r));
    const r = await runVero(['dev', '--db', db, '--port', String(port), '--ui-port', String(uiPort), '--no-worker']);
    expect(r.stderr).toContain(`Web UI port 127.0.0.1:${uiPort} is already in use; pass another --ui-port`);
    noStack(r.stderr);
    expect(r.code).toBe(2);
  });
});

test('vero serve with its API port taken', async () => {
  const s = await setup();
  await withBusyPort(async (port) => {
    const r = await runVero([
      'serve',
      '--config',
      s.serveFile,
      '--address',
      address(),
      '--task-queue',
      uniqueQueue('busy'),
      '--port',
      String(port),
    ]);
    expect(r.stderr).toContain(`error: --port: 127.0.0.1:${port} is already in use`);
    noStack(r.stderr);
    expect(r.code).toBe(2);
  });
}, 400_000); // the first build of a task fetches Harbor's wheels
