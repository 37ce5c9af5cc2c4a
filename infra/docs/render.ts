// Markdown for the regions that derive from code: the plugin table, each plugin page's header,
// example and parity, the every-webhook table and the seeding table. Pure functions of the facts.
import { seedingCommand, seedingPlan } from '../sync/plan.js';
import type { Parity } from './parity.js';
import { PARITY, parityFigure } from './parity.js';
import type { PluginFacts, WebhookFacts } from './plugin-facts.js';
import { LEARNING_REASON, MUTATION_REASON, WEBHOOK_REASONS } from './webhook-reasons.js';

export class RenderError extends Error {
  override readonly name = 'RenderError';
}

const code = (s: string) => `\`${s}\``;
/** A table cell: pipes escaped, so a rule or a reason never splits a row. */
const cell = (s: string | number) => String(s).replace(/\|/g, '\\|');

function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n');
}

export function parityOf(facts: PluginFacts): Parity {
  const parity = PARITY[facts.metadata.name];
  if (!parity) throw new RenderError(`${facts.metadata.name}: no parity figures in infra/docs/parity.ts`);
  return parity;
}

/** The page of a plugin, relative to the docs/plugins directory. */
export const pluginPage = (name: string) => `${name}.md`;

/** One line per plugin: name linked to its page, what it does, whether it is on by default, parity. */
export function pluginTable(all: readonly PluginFacts[], pagePrefix: string): string {
  return table(
    ['plugin', 'what it does', 'default', 'upstream cases'],
    all.map((facts) => [
      `[${facts.metadata.upstreamName}](${pagePrefix}${pluginPage(facts.metadata.name)})`,
      facts.metadata.summary,
      facts.defaultOn ? 'on' : 'off',
      parityFigure(parityOf(facts)),
    ]),
  );
}

function configurationLine(facts: PluginFacts): string {
  if (facts.configurationFields === undefined)
    return 'none: upstream reads no configuration, and neither does this plugin';
  if (facts.configurationFields.length === 0) return 'none (the entry itself is all it takes)';
  return facts.configurationFields.map(code).join(', ');
}

function learnsLine(facts: PluginFacts): string {
  if (facts.learns.length === 0) return 'nothing: it answers from the request alone';
  return `${facts.learns.map(code).join(', ')}, from its learning webhook; what existed before installation: ${code(seedingCommand(seedingPlan([facts.metadata])))} ([seed state](../seed-state.md))`;
}

function unknownNamespaceLine(facts: PluginFacts): string | undefined {
  const rule = facts.unknownNamespace;
  if (rule === undefined) return undefined;
  const choices = rule.choices.map((c) => (c === rule.fallback ? `${code(c)} (default)` : code(c)));
  return `env ${code(rule.env)}: ${choices.join(', ')}`;
}

function webhookRows(webhooks: readonly WebhookFacts[]) {
  return webhooks.map((w) => [
    code(w.name),
    code(w.path),
    w.rules,
    w.failurePolicy,
    w.timeoutSeconds,
    w.sideEffects,
    w.reinvocationPolicy ?? '—',
    w.matchConditions.length > 0 ? w.matchConditions.map(code).join(', ') : '—',
  ]);
}

/** The facts at the top of a plugin's page. */
export function pluginHeader(facts: PluginFacts): string {
  const { metadata } = facts;
  const paths = [...new Set(facts.webhooks.map((w) => w.path))];
  const system = facts.webhooks.every((w) => w.namespaces === 'all')
    ? 'sent, as upstream sees every namespace'
    : `not sent: ${facts.webhooks[0]?.namespaces.replace(/^all but /, '') ?? ''}`;
  const lines = [
    `- **AdmissionConfiguration entry:** ${code(`name: ${metadata.upstreamName}`)}`,
    `- **Under a file that names no plugin:** ${facts.defaultOn ? 'on' : `off: ${facts.offReason}`}`,
    `- **Paths:** ${paths.map(code).join(', ')}`,
    `- **Configuration fields:** ${configurationLine(facts)}`,
    ...(facts.example ? [`- **Example:** [${facts.example}](../../${facts.example})`] : []),
    `- **Learns:** ${learnsLine(facts)}`,
    ...(unknownNamespaceLine(facts) ? [`- **A namespace never seen:** ${unknownNamespaceLine(facts)}`] : []),
    `- **Records side effects of its own:** ${metadata.writes ? 'yes (none for a dry run)' : 'no'}`,
    `- **Requests in system namespaces:** ${system}`,
    '',
    `Webhooks \`npm run emit\` registers for it${facts.example ? ' with the example configuration' : ''}:`,
    '',
    table(
      [
        'webhook',
        'path',
        'rules',
        'failurePolicy',
        'timeoutSeconds',
        'sideEffects',
        'reinvocationPolicy',
        'matchConditions',
      ],
      webhookRows(facts.webhooks),
    ),
  ];
  return lines.join('\n');
}

/** The example configuration, as config/examples holds it (its leading comment block left out). */
export function pluginExample(facts: PluginFacts, exampleText: string | undefined): string {
  if (facts.example === undefined || exampleText === undefined) {
    const entry = code(`- name: ${facts.metadata.upstreamName}`);
    return facts.configurationFields && facts.configurationFields.length > 0
      ? `No example file: a bare ${entry} entry runs it on upstream's defaults, which the fields above change.`
      : `It takes no configuration: a bare ${entry} entry is all it needs.`;
  }
  const lines = exampleText.replace(/\n+$/, '').split('\n');
  const start = lines.findIndex((line) => !line.startsWith('#') && line.trim() !== '');
  return [`From [${facts.example}](../../${facts.example}):`, '', '```yaml', ...lines.slice(start), '```'].join('\n');
}

export function pluginParity(facts: PluginFacts): string {
  const parity = parityOf(facts);
  const lines: string[] = [];
  if (parity.ported !== undefined && parity.asUpstream !== undefined)
    lines.push(`**${parity.asUpstream} of ${parity.ported}** upstream cases ported answer as upstream's tests assert.`);
  else if (parity.tests.length > 0) lines.push("Upstream's tests are ported whole (their cases are not counted here).");
  lines.push('');
  for (const test of parity.tests) lines.push(`- ${test}`);
  if (parity.notPorted)
    lines.push(
      `- Not ported${parity.notPorted.count !== undefined ? ` (${parity.notPorted.count})` : ''}: ${parity.notPorted.why}`,
    );
  if (parity.note) lines.push(`- ${parity.note[0].toUpperCase()}${parity.note.slice(1)}.`);
  lines.push(`- In this suite: ${parity.suite.map((file) => `[${file}](../../${file})`).join(', ')}`);
  return lines.join('\n').replace(/^\n/, '');
}

function reasonOf(facts: PluginFacts, webhook: WebhookFacts): string {
  const role = webhook.name.split('.')[1];
  const reasons = WEBHOOK_REASONS[facts.metadata.name] ?? {};
  if (role === 'learn') return LEARNING_REASON;
  if (webhook.type === 'Mutating') return reasons.mutate ?? MUTATION_REASON;
  if (role === 'validate-ignore' && reasons.validateIgnore !== undefined) return reasons.validateIgnore;
  if (reasons.validate === undefined)
    throw new RenderError(`${webhook.name}: no reason in infra/docs/webhook-reasons.ts for its failurePolicy`);
  return reasons.validate;
}

/** Every webhook `npm run emit` registers with every plugin active, with why it fails open or closed. */
export function webhookTable(all: readonly PluginFacts[]): string {
  return table(
    ['webhook', 'rules', 'failurePolicy', 'timeout', 'sideEffects', 'why'],
    all.flatMap((facts) =>
      facts.webhooks.map((w) => [
        `${code(w.name.replace(/\.serverless-admission\.io$/, ''))}${facts.defaultOn ? '' : ' (off by default)'}`,
        w.rules,
        w.failurePolicy,
        `${w.timeoutSeconds} s`,
        w.sideEffects,
        reasonOf(facts, w),
      ]),
    ),
  );
}

/** What each plugin that learns loads from a listing, and the rule for a namespace it never saw. */
export function seedingTable(all: readonly PluginFacts[]): string {
  return table(
    ['plugin', 'learns', 'a namespace never seen'],
    all
      .filter((f) => f.learns.length > 0)
      .map((f) => [
        `[${f.metadata.upstreamName}](plugins/${pluginPage(f.metadata.name)})`,
        f.learns.map(code).join(', '),
        unknownNamespaceLine(f) ?? '—',
      ]),
  );
}

/** The one command `npm run emit` prints for the plugins on by default. */
export function seedingCommandBlock(all: readonly PluginFacts[]): string {
  const command = seedingCommand(seedingPlan(all.filter((f) => f.defaultOn).map((f) => f.metadata)));
  return ['```sh cluster', command, '```'].join('\n');
}
