// The apiserver's own count of calls to an admission webhook, read from its /metrics: how a test
// shows a webhook that admits everything was called at all, or failed open.
import type { ControlPlane } from './control-plane.js';

/** The sum of a counter's samples whose labels include name="<webhook>". */
export async function webhookCounter(cluster: ControlPlane, metric: string, webhook: string): Promise<number> {
  const answer = await cluster.request('GET', '/metrics', undefined, { accept: 'text/plain' });
  if (answer.status !== 200) throw new Error(`GET /metrics: ${answer.status}`);
  let sum = 0;
  for (const line of answer.body.split('\n')) {
    if (!line.startsWith(`${metric}{`) || !line.includes(`name="${webhook}"`)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
