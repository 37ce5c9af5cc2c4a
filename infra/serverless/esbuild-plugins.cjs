// esbuild plugins for the Lambda bundles (serverless.yml's custom.esbuild.plugins, and the
// cold-start bench, which builds as packaging builds).
//
// middy's core imports node:stream, node:stream/promises and node:stream/web for one feature,
// streamed responses (`streamifyResponse`), which no handler here uses. Those three are not in
// Node's startup snapshot: compiling them was 7.8 of the 13 ms a stateless bundle's import took
// (a CPU profile of the always-admit bundle). For middy's imports alone they resolve to a stub
// that fails loudly if a streamed response is ever asked for; every other importer (the AWS SDK
// uses streams) gets the real modules.
'use strict';

const STUBBED = new Set(['node:stream', 'node:stream/promises', 'node:stream/web']);

const STUB = `
const unsupported = () => { throw new Error('streamed responses are not packaged (infra/serverless/esbuild-plugins.cjs)'); };
export class Readable { static from() { unsupported(); } }
export class ReadableStream {}
export const pipeline = async () => unsupported();
`;

const middyWithoutStreams = {
  name: 'middy-without-streams',
  setup(build) {
    build.onResolve({ filter: /^node:stream/ }, (args) =>
      STUBBED.has(args.path) && /[\\/]@middy[\\/]core[\\/]/.test(args.importer)
        ? { path: args.path, namespace: 'middy-without-streams' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'middy-without-streams' }, () => ({ contents: STUB, loader: 'js' }));
  },
};

module.exports = [middyWithoutStreams];
