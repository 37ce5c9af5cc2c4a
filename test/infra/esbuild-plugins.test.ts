// The Lambda bundles' esbuild plugin: middy's core gets a stub for the stream modules of streamed
// responses (which no handler uses), and every other importer keeps the real modules.
import { createRequire } from 'node:module';
import type { Plugin } from 'esbuild';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const plugins = createRequire(import.meta.url)('../../infra/serverless/esbuild-plugins.cjs') as Plugin[];

async function bundle(contents: string): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    plugins,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

describe('esbuild plugins of the Lambda bundles', () => {
  it("replaces middy's stream imports by a stub that refuses streamed responses", async () => {
    const text = await bundle("import middy from '@middy/core'; export const handler = middy();");
    expect(text).not.toMatch(/from\s*"node:stream/);
    expect(text).toContain('streamed responses are not packaged');
  });

  it('keeps the real stream modules for every other importer', async () => {
    const text = await bundle(
      "import middy from '@middy/core'; import { Readable } from 'node:stream'; export const both = [middy, Readable];",
    );
    expect(text).toMatch(/from\s*"node:stream"/);
  });
});
