/** Whether a process (not a group) exists: signal 0, EPERM meaning "exists, not ours". No dependencies. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
