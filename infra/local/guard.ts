// A child process that must not outlive this one, however this one ends: a normal exit, a signal
// it does not handle (a test worker torn down with SIGTERM), SIGKILL, a crash. 'exit' hooks run in
// the first case only, and Linux's parent-death signal is out of Node's reach, so a one-line shell
// guard holds a pipe from this process and stops the child when the pipe closes: only this
// process holds the other end, and the kernel closes it whenever this process goes.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';

// SIGTERM first (DynamoDB Local closes its files, `npm start` stops its store), SIGKILL 5 s later.
const GUARD = `while read -r _; do :; done
kill -TERM "$1" 2>/dev/null || exit 0
i=0; while [ $i -lt 50 ] && kill -0 "$1" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
kill -KILL "$1" 2>/dev/null`;

export function stopWithThisProcess(child: ChildProcess): void {
  if (child.pid === undefined) return;
  const guard = spawn('/bin/sh', ['-c', GUARD, 'stop-with-parent', String(child.pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  guard.on('error', () => {}); // no /bin/sh: the caller's own cleanup is all there is
  guard.stdin?.on('error', () => {});
  // Neither the guard nor its pipe keeps this process alive; the guard ends with the child.
  guard.unref();
  (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  child.once('exit', () => guard.kill('SIGKILL'));
}
