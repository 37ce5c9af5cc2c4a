// cel-go's optional types (`optional.of(x)`, `a.?b`, `m[?k]`, `.orValue(d)`...), which Kubernetes
// enables for every policy. An optional is a field-less message of type `optional_type` (so it
// passes through @bufbuild/cel's lists, maps and function dispatch) carrying its value beside the
// message; `.or`/`.orValue` short-circuit, so interpreter.ts evaluates them itself.
import { create, createFileRegistry } from '@bufbuild/protobuf';
import { reflect } from '@bufbuild/protobuf/reflect';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import {
  CelScalar,
  celFunc,
  celList,
  celMethod,
  isCelList,
  isCelMap,
  isCelUint,
  listType,
  objectType,
} from '@bufbuild/cel';
import type { CelFunc, CelList, CelValue } from '@bufbuild/cel';

const PAYLOAD = Symbol('optional payload');

export const optionalRegistry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: 'optional_type.proto',
    syntax: 'proto3',
    messageType: [{ name: 'optional_type' }],
  }),
  () => undefined,
);
function optionalDescriptor() {
  const found = optionalRegistry.getMessage('optional_type');
  if (!found) throw new Error('optional_type missing from its registry');
  return found;
}
const desc = optionalDescriptor();
export const OPTIONAL_TYPE = objectType(desc);

type Carrier = { [PAYLOAD]?: CelValue };

/** An optional holding `value`, or none when `value` is undefined. */
export function optionalOf(value: CelValue | undefined): CelValue {
  const message = create(desc, {});
  if (value !== undefined) (message as unknown as Carrier)[PAYLOAD] = value;
  return reflect(desc, message) as never;
}

export const NONE = optionalOf(undefined);

/** The optional's carrier whether it arrives as a message or as @bufbuild/cel's reflection of one. */
function carrier(value: unknown): Carrier | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { $typeName?: string; desc?: { typeName?: string }; message?: Carrier };
  if (v.$typeName === 'optional_type') return v as Carrier;
  if (v.desc?.typeName === 'optional_type' && v.message) return v.message;
  return undefined;
}

export const isOptional = (value: unknown): boolean => carrier(value) !== undefined;

/** The value an optional holds: undefined for none (and for anything not an optional). */
export const optionalValue = (value: unknown): CelValue | undefined => carrier(value)?.[PAYLOAD];

const GO_ZERO_TIME_SECONDS = -62135596800n;

/** cel-go's zero values, for optional.ofNonZeroValue. */
export function isZeroValue(value: CelValue): boolean {
  if (value === null || value === false || value === '' || value === 0 || value === 0n) return true;
  if (isCelUint(value)) return value.value === 0n;
  if (value instanceof Uint8Array) return value.length === 0;
  if (isCelList(value) || isCelMap(value)) return value.size === 0;
  if (isOptional(value)) return optionalValue(value) === undefined;
  const message = (value as { message?: { seconds?: bigint; nanos?: number }; desc?: { typeName?: string } }) ?? {};
  // A duration is zero at 0s; a timestamp at Go's zero time.Time, 0001-01-01T00:00:00Z, not the epoch.
  if (message.desc?.typeName === 'google.protobuf.Duration')
    return !message.message?.seconds && !message.message?.nanos;
  if (message.desc?.typeName === 'google.protobuf.Timestamp')
    return BigInt(message.message?.seconds ?? 0n) === GO_ZERO_TIME_SECONDS && !message.message?.nanos;
  return false;
}

const { DYN, BOOL } = CelScalar;
const LIST = listType(DYN);

/** cel-go's optionalUnwrap: the values of a list of optionals, the absent ones dropped. */
function unwrap(list: CelList): CelValue {
  const out: CelValue[] = [];
  for (const element of list) {
    if (!isOptional(element)) throw new Error(`value ${String(element)} is not optional`);
    const value = optionalValue(element);
    if (value !== undefined) out.push(value);
  }
  return celList(out) as never;
}

export const optionalLibrary: CelFunc[] = [
  celFunc('optional.of', [DYN], OPTIONAL_TYPE, (value) => optionalOf(value) as never),
  celFunc('optional.none', [], OPTIONAL_TYPE, () => NONE as never),
  celFunc(
    'optional.ofNonZeroValue',
    [DYN],
    OPTIONAL_TYPE,
    (value) => (isZeroValue(value) ? NONE : optionalOf(value)) as never,
  ),
  celMethod('hasValue', OPTIONAL_TYPE, [], BOOL, function () {
    return optionalValue(this) !== undefined;
  }),
  celMethod('first', LIST, [], OPTIONAL_TYPE, function () {
    return optionalOf(this.size > 0 ? this.get(0) : undefined) as never;
  }),
  celMethod('last', LIST, [], OPTIONAL_TYPE, function () {
    return optionalOf(this.size > 0 ? this.get(this.size - 1) : undefined) as never;
  }),
  celFunc('optional.unwrap', [LIST], LIST, (list) => unwrap(list) as never),
  celMethod('unwrapOpt', LIST, [], LIST, function () {
    return unwrap(this) as never;
  }),
  celMethod('value', OPTIONAL_TYPE, [], DYN, function () {
    const value = optionalValue(this);
    if (value === undefined) throw new Error('optional.none() dereference');
    return value as never;
  }),
];
