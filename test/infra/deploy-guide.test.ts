// docs/deploy-aws.md against what it describes: every command names a real npm script and
// serverless.yml parameter, every block that needs AWS says so, every link resolves, and it
// names each thing an operator needs to finish a deploy (the checklist of the guide's purpose).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');
const GUIDE = 'docs/deploy-aws.md';
const text = readFileSync(join(ROOT, GUIDE), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const serverlessYml = parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8'));

interface Block {
  readonly info: string;
  readonly lines: readonly string[];
}

function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  let current: { info: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    const fence = /^```(.*)$/.exec(line);
    if (fence && !current) current = { info: fence[1]!.trim(), lines: [] };
    else if (fence && current) {
      found.push(current);
      current = undefined;
    } else current?.lines.push(line);
  }
  return found;
}

const code = blocks(text);
/** A command needs AWS when it deploys, removes, reads the stack or calls the aws CLI. */
const NEEDS_AWS = /\bsls (deploy|remove)\b|^\s*aws |npm run -s outputs|AWS_REGION=/;

describe(GUIDE, () => {
  it('marks every block sh, or sh aws when it needs an AWS account', () => {
    expect(code.length).toBeGreaterThan(5);
    for (const block of code) {
      expect(['sh', 'sh aws'], block.lines.join('\n')).toContain(block.info);
      if (block.lines.some((l) => NEEDS_AWS.test(l))) expect(block.info, block.lines.join('\n')).toBe('sh aws');
    }
  });

  it('runs only npm scripts the project has', () => {
    const scripts = [...text.matchAll(/\bnpm run (?:-s )?([\w-]+)/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(5);
    for (const script of scripts) expect(Object.keys(pkg.scripts), script).toContain(script);
  });

  it('passes only parameters serverless.yml declares', () => {
    const params = [...text.matchAll(/--param="(\w+)=/g)].map((m) => m[1]!);
    expect(params).toEqual(expect.arrayContaining(['callerAuth', 'domainName', 'certificateArn', 'truststoreUri']));
    for (const param of params) expect(Object.keys(serverlessYml.params.default), param).toContain(param);
  });

  it('links only to files and headings that exist', () => {
    const headings = (markdown: string) =>
      [...markdown.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^\w\s-]/g, '')
          .replace(/\s/g, '-'),
      );
    for (const [, target] of text.matchAll(/\]\(([^)]+)\)/g)) {
      if (target!.startsWith('https://')) continue;
      const [path, fragment] = target!.split('#');
      if (!path) {
        expect(headings(text), target).toContain(fragment);
        continue;
      }
      const file = join(ROOT, dirname(GUIDE), path);
      expect(existsSync(file), target).toBe(true);
      if (fragment) expect(headings(readFileSync(file, 'utf8')), target).toContain(fragment);
    }
  });

  it("states serverless.yml's region rule and the deployed table's name as serverless.yml makes them", () => {
    expect(text).toContain(serverlessYml.provider.region);
    expect(serverlessYml.resources[0].Resources.StateTable.Properties.TableName).toBe(
      `\${self:service}-\${sls:stage}-state`,
    );
    expect(text).toContain('STATE_TABLE=serverless-admission-prod-state');
  });

  it.each([
    ['credentials', /AWS_PROFILE/],
    ['the deployer policy', /\(deployer-policy\.json\)/],
    ['the region', /--region/],
    ['the base URL output, with and without a domain', /WebhookBaseUrl[\s\S]*execute-api\.\{region\}/],
    ['the DNS target output', /WebhookDomainTarget/],
    ['the command that prints the emit command', /npm run -s outputs -- --stage prod --region eu-west-1 --emit/],
    ['url-secret: the key before the deploy', /--public-key[\s\S]*urlCapabilityKeys[\s\S]*--base-url/],
    [
      'sync against the deployed table',
      /STATE_TABLE=serverless-admission-prod-state AWS_REGION=eu-west-1 npm run sync/,
    ],
    ['teardown', /sls remove[\s\S]*DeletionPolicy: Retain|DeletionPolicy: Retain[\s\S]*sls remove/],
    ["the retained table's deletion", /aws dynamodb delete-table --table-name serverless-admission-prod-state/],
    ['the plugin selection rule', /exactly the named plugins are served, packaged and emitted/],
  ])('names %s', (_, pattern) => {
    expect(text).toMatch(pattern);
  });

  it("prices each service from AWS's published pages", () => {
    for (const page of [
      'https://aws.amazon.com/api-gateway/pricing/',
      'https://aws.amazon.com/lambda/pricing/',
      'https://aws.amazon.com/dynamodb/pricing/on-demand/',
      'https://aws.amazon.com/cloudwatch/pricing/',
    ])
      expect(text).toContain(`(${page})`);
  });

  it('writes the webhook configurations, which hold capabilities, only where git ignores them', () => {
    const targets = code
      .flatMap((b) => b.lines)
      .filter((l) => /--emit\b/.test(l))
      .flatMap((l) => [...l.matchAll(/>\s*(\S+)/g)].map((m) => m[1]!))
      .filter((t) => t !== '/dev/null');
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) {
      if (target.startsWith('~/')) continue; // outside the repository
      const ignored = spawnSync('git', ['check-ignore', '-q', target], { cwd: ROOT });
      expect(ignored.status, `${target} is not ignored by git`).toBe(0);
    }
  });
});

describe('docs/managed-url-secret.md', () => {
  it("emits for the local trial with the local CA, which the apiserver needs to trust npm start's certificate", () => {
    const page = readFileSync(join(ROOT, 'docs/managed-url-secret.md'), 'utf8').replace(/\s*\n\s*/g, ' ');
    const local = [...page.matchAll(/`npm run -s emit -- [^`]*127\.0\.0\.1[^`]*`/g)].map((m) => m[0]);
    expect(local.length).toBeGreaterThan(0);
    for (const command of local) expect(command).toContain('--ca-bundle .local/pki/ca.crt');
  });
});
