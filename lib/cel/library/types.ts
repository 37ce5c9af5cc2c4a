// Kubernetes' CEL libraries add opaque types (Quantity, URL, IP, CIDR, Semver). @bufbuild/cel only
// knows protobuf messages as object types, so each one is a one-field message in a registry built
// here at start: `type(quantity('1'))` is `kubernetes.Quantity`, `==` compares the canonical form.
import { create, createFileRegistry, createRegistry } from '@bufbuild/protobuf';
import type { DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { objectType } from '@bufbuild/cel';
import type { CelObjectType, CelValue } from '@bufbuild/cel';

const TYPE_STRING = 9;
const LABEL_OPTIONAL = 1;
/** Upstream's type names: `kubernetes.Quantity`, `kubernetes.URL`, `kubernetes.Semver`, `net.IP`, `net.CIDR`. */
const PACKAGES = { kubernetes: ['Quantity', 'URL', 'Semver', 'NamedFormat'], net: ['IP', 'CIDR'] } as const;
type OpaqueName =
  | 'kubernetes.Quantity'
  | 'kubernetes.URL'
  | 'kubernetes.Semver'
  | 'kubernetes.NamedFormat'
  | 'net.IP'
  | 'net.CIDR';

const files = Object.entries(PACKAGES).map(([pkg, names]) =>
  create(FileDescriptorProtoSchema, {
    name: `${pkg}_cel.proto`,
    package: pkg,
    syntax: 'proto3',
    messageType: names.map((name) => ({
      name,
      field: [{ name: 'value', number: 1, type: TYPE_STRING, label: LABEL_OPTIONAL, jsonName: 'value' }],
    })),
  }),
);

export const kubernetesTypes = createRegistry(...files.map((file) => createFileRegistry(file, () => undefined)));

function descriptor(name: OpaqueName): DescMessage {
  const desc = kubernetesTypes.getMessage(name);
  if (!desc) throw new Error(`${name} missing from the registry`);
  return desc;
}

export interface OpaqueType {
  readonly type: CelObjectType;
  /** A CEL value of this type holding `value` (its canonical text). */
  wrap(value: string): CelValue;
}

function opaque(name: OpaqueName): OpaqueType {
  const desc = descriptor(name);
  return { type: objectType(desc), wrap: (value) => create(desc, { value }) as never };
}

export const QUANTITY = opaque('kubernetes.Quantity');
export const URL_TYPE = opaque('kubernetes.URL');
export const IP_TYPE = opaque('net.IP');
export const CIDR_TYPE = opaque('net.CIDR');
export const SEMVER = opaque('kubernetes.Semver');
export const NAMED_FORMAT = opaque('kubernetes.NamedFormat');

/** The text inside an opaque value: methods receive the message as a ReflectMessage. */
export function opaqueText(value: unknown): string {
  const message = (value as { message?: { value?: unknown } }).message;
  if (typeof message?.value !== 'string') throw new Error('not a Kubernetes CEL value');
  return message.value;
}
