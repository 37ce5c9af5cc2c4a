// The merge-schema generator (infra/merge-schema) on a small golang-k8s-client-go-dev of our own:
// the package itself is not in CI (it is a Debian package; regenerating from it is the manual step
// docs/design/dependencies.md describes), so this tree has its layout, an internal.go whose schema
// YAML exercises each form structured-merge-diff's schema takes, and the apply configurations that
// name the kinds.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateFrom,
  kindOfApplyConfiguration,
  MergeSchemaSourceError,
  renderModule,
  schemaTypes,
} from '../../infra/merge-schema/generate.js';
import { parseMergeSchema } from '../../lib/kube/merge-schema.js';
import { findAtomics, merge, typeOfKind } from '../../lib/kube/structured-merge.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const CLIENT_GO = 'usr/share/gocode/src/k8s.io/client-go';

// Every form: a kind with metadata, a list-map with a defaulted key, a set (an associative list
// of scalars), an atomic struct, an atomic map, atomic lists of scalars and of structs, a named
// reference that overrides the relationship both ways, a map of untyped values (RawExtension), an
// untyped atomic value, a granular map of scalars, named scalars, and two recursive types.
const SCHEMA_YAML = `types:
- name: io.k8s.api.example.v1.Widget
  map:
    fields:
    - name: apiVersion
      type:
        scalar: string
    - name: kind
      type:
        scalar: string
    - name: metadata
      type:
        namedType: io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta
      default: {}
    - name: spec
      type:
        namedType: io.k8s.api.example.v1.WidgetSpec
      default: {}
- name: io.k8s.api.example.v1.WidgetSpec
  map:
    fields:
    - name: claim
      type:
        namedType: io.k8s.api.example.v1.Reference
        elementRelationship: separable
    - name: count
      type:
        namedType: io.k8s.apimachinery.pkg.api.resource.Quantity
    - name: data
      type:
        namedType: __untyped_atomic_
    - name: labels
      type:
        map:
          elementType:
            scalar: string
    - name: notes
      type:
        list:
          elementType:
            scalar: string
          elementRelationship: atomic
    - name: options
      type:
        map:
          elementType:
            scalar: string
          elementRelationship: atomic
    - name: owner
      type:
        namedType: io.k8s.api.example.v1.Owner
        elementRelationship: atomic
    - name: parts
      type:
        list:
          elementType:
            namedType: io.k8s.api.example.v1.Part
          elementRelationship: associative
          keys:
          - name
          - kind
    - name: plain
      type:
        namedType: io.k8s.api.example.v1.Node
    - name: raw
      type:
        namedType: io.k8s.apimachinery.pkg.runtime.RawExtension
    - name: ref
      type:
        namedType: io.k8s.api.example.v1.Reference
    - name: rules
      type:
        list:
          elementType:
            namedType: io.k8s.api.example.v1.Reference
          elementRelationship: atomic
    - name: tags
      type:
        list:
          elementType:
            scalar: string
          elementRelationship: associative
    - name: tree
      type:
        namedType: io.k8s.api.example.v1.Tree
- name: io.k8s.api.example.v1.Node
  map:
    fields:
    - name: children
      type:
        list:
          elementType:
            namedType: io.k8s.api.example.v1.Node
          elementRelationship: atomic
- name: io.k8s.api.example.v1.Owner
  map:
    fields:
    - name: name
      type:
        scalar: string
- name: io.k8s.api.example.v1.Part
  map:
    fields:
    - name: kind
      type:
        scalar: string
      default: Bolt
    - name: name
      type:
        scalar: string
      default: ""
    - name: size
      type:
        scalar: numeric
- name: io.k8s.api.example.v1.Reference
  map:
    fields:
    - name: name
      type:
        scalar: string
    elementRelationship: atomic
- name: io.k8s.api.example.v1.Tree
  map:
    fields:
    - name: children
      type:
        list:
          elementType:
            namedType: io.k8s.api.example.v1.Tree
          elementRelationship: associative
          keys:
          - name
    - name: name
      type:
        scalar: string
- name: io.k8s.apimachinery.pkg.api.resource.Quantity
  scalar: untyped
- name: io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta
  map:
    fields:
    - name: finalizers
      type:
        list:
          elementType:
            scalar: string
          elementRelationship: associative
    - name: labels
      type:
        map:
          elementType:
            scalar: string
    - name: name
      type:
        scalar: string
- name: io.k8s.apimachinery.pkg.runtime.RawExtension
  map:
    elementType:
      scalar: untyped
      list:
        elementType:
          namedType: __untyped_atomic_
        elementRelationship: atomic
      map:
        elementType:
          namedType: __untyped_deduced_
        elementRelationship: separable
- name: __untyped_atomic_
  scalar: untyped
  list:
    elementType:
      namedType: __untyped_atomic_
    elementRelationship: atomic
  map:
    elementType:
      namedType: __untyped_atomic_
    elementRelationship: atomic
- name: __untyped_deduced_
  scalar: untyped
  list:
    elementType:
      namedType: __untyped_atomic_
    elementRelationship: atomic
  map:
    elementType:
      namedType: __untyped_deduced_
    elementRelationship: separable
`;

const INTERNAL_GO = `// Code generated by applyconfiguration-gen. DO NOT EDIT.

package internal

var schemaYAML = typed.YAMLObject(\`${SCHEMA_YAML}\`)
`;

const applyConfiguration = (kind: string, apiVersion: string, type: string) => `package v1

func ${kind}(name string) *${kind}ApplyConfiguration {
	b := &${kind}ApplyConfiguration{}
	b.WithName(name)
	b.WithKind("${kind}")
	b.WithAPIVersion("${apiVersion}")
	return b
}

func Extract${kind}From(w *examplev1.${kind}, fieldManager string, subresource string) (*${kind}ApplyConfiguration, error) {
	b := &${kind}ApplyConfiguration{}
	err := managedfields.ExtractInto(w, internal.Parser().Type("${type}"), fieldManager, b, subresource)
	return b, err
}
`;

let dir: string;
let root: string;

function write(path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'merge-schema-'));
  root = join(dir, 'deb');
  write(`${CLIENT_GO}/applyconfigurations/internal/internal.go`, INTERNAL_GO);
  write(
    `${CLIENT_GO}/applyconfigurations/example/v1/widget.go`,
    applyConfiguration('Widget', 'example.k8s.io/v1', 'io.k8s.api.example.v1.Widget'),
  );
  // A nested apply configuration: no kind, no apiVersion of its own.
  write(
    `${CLIENT_GO}/applyconfigurations/example/v1/widgetspec.go`,
    'package v1\n\ntype WidgetSpecApplyConfiguration struct{}\n',
  );
  write(
    'usr/share/doc/golang-k8s-client-go-dev/changelog.Debian.gz',
    gzipSync('golang-k8s-client-go (0.99.1-2) unstable; urgency=medium\n\n  * New upstream release.\n'),
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('infra/merge-schema: the merge schema from golang-k8s-client-go-dev', () => {
  it('keeps every field of every type with its scalar kind, in the compact text, with the package version', () => {
    const { version, text } = generateFrom(root);
    expect(version).toBe('0.99.1-2');
    expect(text).toEqual({
      types: {
        'io.k8s.api.example.v1': {
          // A relationship override is a type of its own (atomic Owner, granular Reference);
          // named scalars are written inline (count: untyped, `@`), numbers as `#`.
          Node: 'children:*Node',
          Owner: 'name:',
          Owner_atomic: '!name:',
          Part: 'kind: name: size:#',
          Reference: '!name:',
          Reference_separable: 'name:',
          Tree: 'children:=name/Tree name:',
          Widget: 'apiVersion: kind: metadata:io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta spec:WidgetSpec',
          WidgetSpec:
            'claim:Reference_separable count:@ data:~? labels:% notes:* options:~ owner:Owner_atomic parts:=name,kind/Part ' +
            'plain:Node raw:io.k8s.apimachinery.pkg.runtime.RawExtension ref:Reference rules:*Reference tags:+ tree:Tree',
        },
        'io.k8s.apimachinery.pkg.apis.meta.v1': { ObjectMeta: 'finalizers:+ labels:% name:' },
        'io.k8s.apimachinery.pkg.runtime': { RawExtension: '%?' },
      },
      kinds: { 'example.k8s.io/v1': ['io.k8s.api.example.v1', 'Widget'] },
      keyDefaults: { 'io.k8s.api.example.v1.Part.kind': 'Bolt', 'io.k8s.api.example.v1.Part.name': '' },
      // Declarative defaults; the zero value of a non-pointer field (Part.name: '') is none.
      fieldDefaults: { 'io.k8s.api.example.v1.Part.kind': 'Bolt' },
    });
  });

  it('merges with the generated schema as structured-merge-diff would', () => {
    const schema = parseMergeSchema(generateFrom(root).text);
    const type = typeOfKind(schema, 'example.k8s.io/v1', 'Widget');
    const live = {
      spec: {
        parts: [
          { name: 'a', size: 1 },
          { name: 'b', kind: 'Nut' },
        ],
        tags: ['x'],
        options: { a: '1' },
        plain: { children: [{ children: [] }] },
        tree: { children: [{ name: 't', children: [{ name: 'u' }] }] },
      },
    };
    const patch = {
      spec: {
        parts: [{ name: 'a', kind: 'Bolt', size: 2 }, { name: 'b' }],
        tags: ['x', 'y'],
        options: { b: '2' },
        tree: { children: [{ name: 't', children: [{ name: 'v' }] }] },
      },
    };
    expect(merge(schema, live, patch, type)).toEqual({
      spec: {
        // Part.kind defaults to Bolt: {name: b} is not the Nut.
        parts: [{ name: 'a', size: 2, kind: 'Bolt' }, { name: 'b', kind: 'Nut' }, { name: 'b' }],
        tags: ['x', 'y'],
        options: { b: '2' },
        plain: { children: [{ children: [] }] },
        tree: { children: [{ name: 't', children: [{ name: 'u' }, { name: 'v' }] }] },
      },
    });
    const atomics = findAtomics(
      schema,
      {
        spec: {
          data: { a: 1 },
          options: {},
          owner: { name: 'o' },
          claim: { name: 'c' },
          raw: { list: [1] },
          rules: [{ name: 'r' }],
          notes: ['n'],
        },
      },
      type,
    );
    // claim is granular here, and a RawExtension's values are not looked into, as upstream's check.
    expect(atomics).toEqual([
      '.spec.data',
      '.spec.notes',
      '.spec.options',
      '.spec.owner',
      '.spec.rules',
      '.spec.rules[0]',
    ]);
  });

  it('renders the same module byte for byte each time, naming the package, version and command', () => {
    const first = generateFrom(root);
    const module = renderModule(first.version, first.text);
    expect(renderModule(generateFrom(root).version, generateFrom(root).text)).toBe(module);
    expect(module).toContain('Source: Debian package golang-k8s-client-go-dev 0.99.1-2');
    expect(module).toContain('npm run merge-schema -- --from <dir>');
    expect(module).toContain('export const MERGE_SCHEMA_SOURCE = "golang-k8s-client-go-dev 0.99.1-2";');
  });

  it('writes the module with npm run merge-schema, and --check finds it the same, or not', () => {
    const out = join(dir, 'merge-schema.generated.ts');
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'infra/merge-schema/cli.ts'), ...args], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    const written = cli('--from', root, '--out', out);
    expect(written.status, written.stderr).toBe(0);
    const { version, text } = generateFrom(root);
    expect(readFileSync(out, 'utf8')).toBe(renderModule(version, text));
    expect(cli('--from', root, '--out', out, '--check').status).toBe(0);
    writeFileSync(out, `${readFileSync(out, 'utf8')}// edited\n`);
    const changed = cli('--from', root, '--out', out, '--check');
    expect(changed.status).toBe(1);
    expect(changed.stderr).toContain('differs from what golang-k8s-client-go-dev 0.99.1-2 gives');
    expect(cli().status).toBe(2);
  });

  it('reads a kind only from an apply configuration that has one, and refuses a source without a schema', () => {
    expect(kindOfApplyConfiguration(applyConfiguration('Pod', 'v1', 'io.k8s.api.core.v1.Pod'))).toEqual([
      '/v1/Pod',
      'io.k8s.api.core.v1.Pod',
    ]);
    expect(kindOfApplyConfiguration('package v1\n\ntype PodSpecApplyConfiguration struct{}\n')).toBeUndefined();
    expect(() => schemaTypes('package internal\n')).toThrow(MergeSchemaSourceError);
    expect(() => schemaTypes('var schemaYAML = typed.YAMLObject(`other: 1`)')).toThrow('the schema YAML has no types');
  });
});
