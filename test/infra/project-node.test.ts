// The project's Node is Lambda's: serverless.yml's runtime, the bundles' esbuild target, the
// `node` dev dependency that npm scripts run on (npm puts node_modules/.bin first on their PATH),
// and the Node this suite runs on are one major version, whatever Node the machine has.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const serverlessYml = parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8'));
const lambdaMajor = Number(/^nodejs(\d+)\.x$/.exec(serverlessYml.provider.runtime)?.[1]);
const major = (version: string) => Number(/^v?(\d+)\./.exec(version)?.[1]);

describe("the project's Node", () => {
  it('is Lambda runtime major everywhere it is named', () => {
    expect(lambdaMajor).toBe(22);
    expect(serverlessYml.custom.esbuild.target).toBe(`node${lambdaMajor}`);
    expect(major(pkg.devDependencies.node)).toBe(lambdaMajor);
    expect(pkg.engines.node).toBe(`>=${lambdaMajor}`);
    expect(major(pkg.devDependencies['@types/node'])).toBe(lambdaMajor);
  });

  it('runs this suite (through npm test or npx vitest, both on node_modules/.bin/node)', () => {
    expect(major(process.version)).toBe(lambdaMajor);
  });

  it('is the node of npm scripts: npm exec puts the dev dependency first on PATH', () => {
    const run = spawnSync('npm', ['exec', '--', 'node', '-p', 'process.version'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(major(run.stdout.trim())).toBe(lambdaMajor);
    expect(run.stdout.trim()).toBe(`v${pkg.devDependencies.node}`);
  });

  it('gives the AWS SDK no reason to warn about the Node version', () => {
    const script =
      "const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb'); new DynamoDBClient({ region: 'local' }).destroy();";
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('NodeVersionSupportWarning');
  });

  it('reviews every install script: each package that has one is approved or denied in allowScripts', () => {
    const run = spawnSync('npm', ['install-scripts', 'ls'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('No packages with unreviewed install scripts.');
    // The node dev dependency's preinstall puts the binary in place: without it there is no Node 22.
    expect(pkg.allowScripts.node).toBe(true);
  });
});
