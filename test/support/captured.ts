// An in-process command (emitCommand, checkCommand...) run with what it prints collected: the
// commands take stdout and stderr as functions in their io, beside what else each needs.

export interface CapturedRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Output {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** `command` run with `output` collecting what it prints; its exit code and both streams. */
export async function captured(command: (output: Output) => number | Promise<number>): Promise<CapturedRun> {
  let stdout = '';
  let stderr = '';
  const code = await command({
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}
