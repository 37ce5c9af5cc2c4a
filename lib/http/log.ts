/**
 * One structured JSON line per request on stdout, which Lambda ships to CloudWatch Logs.
 * LOG_LEVEL=silent turns it off (tests); a sink can be swapped in to read the lines.
 */
export type LogRecord = Record<string, unknown>;
export type LogSink = (line: string) => void;

// Lines written in one turn of the event loop, when coalescing (the local server).
let pending: string[] | undefined;
let coalescing = false;

function flushPending(): void {
  const lines = pending;
  pending = undefined;
  if (lines) process.stdout.write(`${lines.join('\n')}\n`);
}

const stdoutSink: LogSink = (line) => {
  if (!coalescing) {
    process.stdout.write(`${line}\n`);
    return;
  }
  if (pending) pending.push(line);
  else {
    pending = [line];
    setImmediate(flushPending);
  }
};
let sink: LogSink = stdoutSink;

/**
 * The local server answers many requests in one turn of the event loop, and stdout to a file or
 * a terminal is written synchronously: one write(2) per line was about 9 µs of each request's CPU
 * under load (docs/performance.md). Coalesced, the lines of one turn go out in one
 * write at its end (setImmediate), in order, and whatever is pending when the process exits. A
 * Lambda function, whose instance may be frozen once it answers, writes each line at once.
 */
export function coalesceStdoutLines(): void {
  if (coalescing) return;
  coalescing = true;
  process.on('exit', flushPending);
}

export function setLogSink(next: LogSink | undefined): void {
  sink = next ?? stdoutSink;
}

// process.env is slow to read on every request; LOG_LEVEL is read once, on first use.
let silent: boolean | undefined;

/** False when LOG_LEVEL=silent and no sink listens: callers skip building the record. */
export function logEnabled(): boolean {
  silent ??= process.env.LOG_LEVEL === 'silent';
  return sink !== stdoutSink || !silent;
}

/** The longest text a logged field keeps; a stack trace keeps more. */
export const MAX_LOGGED_FIELD = 256;
export const MAX_LOGGED_STACK = 2048;

/**
 * `text` cut to `max` characters, the cut marked with how much was left out. Whatever a caller
 * sends (a 3,000-character namespace) or a store answers is logged at most this long, so one
 * request cannot make a line, or the log's bill, as long as it likes.
 */
export function bounded(text: string, max?: number): string;
export function bounded(text: string | undefined, max?: number): string | undefined;
export function bounded(text: string | undefined, max = MAX_LOGGED_FIELD): string | undefined {
  if (text === undefined || text.length <= max) return text;
  return `${text.slice(0, max)}…[${text.length - max} more characters]`;
}

/**
 * Writes the record as one JSON line. `into`, a JSON object's text whose keys the record does not
 * use (an EMF metrics line), is extended with the record's fields: CloudWatch reads the metrics
 * and Logs Insights the fields from the same line.
 */
export function logRecord(record: LogRecord, into?: string): void {
  if (!logEnabled()) return;
  const fields = JSON.stringify(record);
  const json = `{"time":"${isoTime()}"${fields === '{}' ? '' : ','}${fields.slice(1)}`;
  sink(into === undefined ? json : `${into.slice(0, -1)},${json.slice(1)}`);
}

// A server answers many requests in one millisecond: the time's text is made once per millisecond.
let timeMs = Number.NaN;
let timeText = '';

/** Now, as Date's toISOString writes it. */
function isoTime(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeText = new Date(now).toISOString();
  }
  return timeText;
}

/** A line that is already JSON (an EMF line the request log did not extend). */
export function writeLogLine(line: string): void {
  if (logEnabled()) sink(line);
}
