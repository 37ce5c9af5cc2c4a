// Loaded into a server process with `--import` by the benches that measure through it: the event
// loop's delay (Node's own histogram, 5 ms resolution), written as JSON to EVENT_LOOP_PROBE_FILE
// and reset on SIGUSR2, so a bench reads the delay of exactly the burst it sent.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.EVENT_LOOP_PROBE_FILE;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  process.on('SIGUSR2', () => {
    const figures = { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
    writeFileSync(file, `${JSON.stringify(figures)}\n`);
    histogram.reset();
  });
}
