// Kubernetes' CEL libraries add opaque types (Quantity, URL, IP, CIDR, Semver). @bufbuild/cel only
// knows protobuf messages as object types, so each one is a one-field message in a registry built
// here at start: `type(quantity('1'))` is `kubernetes.Quantity`, `==` compares the canonical form.
import { create, createFileRegistry } from '@bufbuild/protobuf';
import type { DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { objectType } from '@bufbuild/cel';
import type { CelObjectType, CelValue } from '@bufbuild/cel';

const TYPE_STRING = 9;
const LABEL_OPTIONAL = 1;
const NAMES = ['Quantity', 'URL', 'IP', 'CIDR', 'Semver'] as const;
type OpaqueName = (typeof NAMES)[number];

const file = create(FileDescriptorProtoSchema, {
  name: 'kubernetes_cel.proto',
  package: 'kubernetes',
  syntax: 'proto3',
  messageType: NAMES.map((name) => ({ name, field: [{ name: 'value', number: 1, type: TYPE_STRING, label: LABEL_OPTIONAL, jsonName: 'value' }] })),
});

export const kubernetesTypes = createFileRegistry(file, () => undefined);

function descriptor(name: OpaqueName): DescMessage {
  const desc = kubernetesTypes.getMessage(`kubernetes.${name}`);
  if (!desc) throw new Error(`kubernetes.${name} missing from the registry`);
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

export const QUANTITY = opaque('Quantity');
export const URL_TYPE = opaque('URL');
export const IP_TYPE = opaque('IP');
export const CIDR_TYPE = opaque('CIDR');
export const SEMVER = opaque('Semver');

/** The text inside an opaque value: methods receive the message as a ReflectMessage. */
export function opaqueText(value: unknown): string {
  const message = (value as { message?: { value?: unknown } }).message;
  if (typeof message?.value !== 'string') throw new Error('not a Kubernetes CEL value');
  return message.value;
}
