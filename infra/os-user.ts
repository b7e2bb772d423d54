/** Local OS users: who a name is (/etc/passwd), and handing a directory tree to one. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** uid/gid of a local user, from /etc/passwd; null when there is no such user. */
export function lookupUser(name: string): { uid: number; gid: number; home: string } | null {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '/' };
    }
  } catch {
    /* no passwd file */
  }
  return null;
}

/** Gives `dir` and everything in it to uid/gid (symlinks themselves, not their targets). */
export function chownTree(dir: string, uid: number, gid: number): void {
  fs.chownSync(dir, uid, gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid, gid);
    else fs.lchownSync(p, uid, gid);
  }
}
