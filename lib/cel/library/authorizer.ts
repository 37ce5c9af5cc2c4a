// Kubernetes' authz library (k8s.io/apiserver/pkg/cel/library/authz.go): the `authorizer` variable
// of admission policies, which asks the apiserver's authorizer whether the request's user may do
// something else (`authorizer.group('certificates.k8s.io').resource('signers').name(n).check('approve')`).
//
// A webhook has no authorizer to ask, so by default `authorizer` stays undeclared and a policy that
// names it is refused at start. Where this engine stands in for an apiserver (the native-policy
// proofs), an authorizer is installed first: expressions then compile with `authorizer` and
// `authorizer.requestResource` declared, and every request's bindings carry them, bound to its user.
//
// Each value is a field-less message of its upstream type (`kubernetes.authorization.ResourceCheck`
// ...) carrying its state beside the message, as optional.ts carries an optional's value.
import { create, createFileRegistry } from '@bufbuild/protobuf';
import type { DescMessage } from '@bufbuild/protobuf';
import { reflect } from '@bufbuild/protobuf/reflect';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { CelScalar, celMethod, objectType } from '@bufbuild/cel';
import type { CelFunc, CelValue } from '@bufbuild/cel';
import type { AdmissionRequest } from '../../admission/request.js';
import type { UserInfo } from '../../admission/types.js';

/** authorizer.AttributesRecord, as the library fills it. */
export interface AuthorizationAttributes {
  readonly user: Readonly<UserInfo>;
  readonly verb: string;
  /** False for a non-resource request (`authorizer.path(...)`). */
  readonly resourceRequest: boolean;
  readonly path: string;
  readonly apiGroup: string;
  /** Always `*`: the library does not name a version. */
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

export interface AuthorizerDecision {
  readonly decision: 'Allow' | 'Deny' | 'NoOpinion';
  readonly reason: string;
  /** An authorizer that failed to decide (a webhook authorizer's outage). */
  readonly error?: string;
}

export type Authorizer = (attributes: AuthorizationAttributes) => AuthorizerDecision;

const TYPE_NAMES = ['Authorizer', 'PathCheck', 'GroupCheck', 'ResourceCheck', 'Decision'] as const;
type TypeName = (typeof TYPE_NAMES)[number];

export const authorizerRegistry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: 'kubernetes_authorization_cel.proto',
    package: 'kubernetes.authorization',
    syntax: 'proto3',
    messageType: TYPE_NAMES.map((name) => ({ name })),
  }),
  () => undefined,
);

function descriptor(name: TypeName): DescMessage {
  const desc = authorizerRegistry.getMessage(`kubernetes.authorization.${name}`);
  if (!desc) throw new Error(`kubernetes.authorization.${name} missing from its registry`);
  return desc;
}
const DESCRIPTORS = Object.fromEntries(TYPE_NAMES.map((n) => [n, descriptor(n)])) as Record<TypeName, DescMessage>;
export const AUTHORIZER_TYPES = Object.fromEntries(TYPE_NAMES.map((n) => [n, objectType(DESCRIPTORS[n])])) as Record<
  TypeName,
  ReturnType<typeof objectType>
>;

const STATE = Symbol('authorizer state');

interface Principal {
  readonly authorize: Authorizer;
  readonly user: Readonly<UserInfo>;
}
interface ResourceState extends Principal {
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}
type State =
  | ({ readonly type: 'Authorizer' } & Principal)
  | ({ readonly type: 'PathCheck'; readonly path: string } & Principal)
  | ({ readonly type: 'GroupCheck'; readonly group: string } & Principal)
  | ({ readonly type: 'ResourceCheck' } & ResourceState)
  | { readonly type: 'Decision'; readonly decision: AuthorizerDecision };

type Carrier = { [STATE]?: State };

function authzValue(state: State): never {
  const desc = DESCRIPTORS[state.type];
  const message = create(desc, {});
  (message as unknown as Carrier)[STATE] = state;
  return reflect(desc, message) as never;
}

/** The state of a value, whether it arrives as a message or as @bufbuild/cel's reflection of one. */
function stateOf<T extends State['type']>(value: unknown, type: T): Extract<State, { type: T }> {
  const v = value as { [STATE]?: State; message?: Carrier } | null;
  const state = v?.[STATE] ?? v?.message?.[STATE];
  if (state?.type !== type) throw new Error(`no such overload: not a kubernetes.authorization.${type}`);
  return state as Extract<State, { type: T }>;
}

const blank = (text: string) => text.trim() === '';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function decide(principal: Principal, attributes: Omit<AuthorizationAttributes, 'user'>): never {
  return authzValue({ type: 'Decision', decision: principal.authorize({ ...attributes, user: principal.user }) });
}

const { BOOL, STRING } = CelScalar;
const T = AUTHORIZER_TYPES;

export const authzLibrary: CelFunc[] = [
  celMethod('path', T.Authorizer, [STRING], T.PathCheck, function (path) {
    const a = stateOf(this, 'Authorizer');
    if (blank(path)) throw new Error('path must not be empty');
    return authzValue({ type: 'PathCheck', authorize: a.authorize, user: a.user, path });
  }),
  celMethod('group', T.Authorizer, [STRING], T.GroupCheck, function (group) {
    const a = stateOf(this, 'Authorizer');
    return authzValue({ type: 'GroupCheck', authorize: a.authorize, user: a.user, group });
  }),
  celMethod('serviceAccount', T.Authorizer, [STRING, STRING], T.Authorizer, function (namespace, name) {
    const a = stateOf(this, 'Authorizer');
    if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) throw new Error('Invalid service account name');
    if (namespace.length > 63 || !DNS_LABEL.test(namespace)) throw new Error('Invalid service account namespace');
    // serviceaccount.ServiceAccountInfo.UserInfo
    const user: UserInfo = {
      username: `system:serviceaccount:${namespace}:${name}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
    };
    return authzValue({ type: 'Authorizer', authorize: a.authorize, user });
  }),
  celMethod('resource', T.GroupCheck, [STRING], T.ResourceCheck, function (resource) {
    const g = stateOf(this, 'GroupCheck');
    if (blank(resource)) throw new Error('resource must not be empty');
    return authzValue({ ...g, type: 'ResourceCheck', resource, subresource: '', namespace: '', name: '' });
  }),
  ...(['subresource', 'namespace', 'name'] as const).map((field) =>
    celMethod(field, T.ResourceCheck, [STRING], T.ResourceCheck, function (value) {
      return authzValue({ ...stateOf(this, 'ResourceCheck'), [field]: value });
    }),
  ),
  celMethod('check', T.PathCheck, [STRING], T.Decision, function (verb) {
    const p = stateOf(this, 'PathCheck');
    return decide(p, { ...NON_RESOURCE, path: p.path, verb });
  }),
  celMethod('check', T.ResourceCheck, [STRING], T.Decision, function (verb) {
    const r = stateOf(this, 'ResourceCheck');
    const { group: apiGroup, resource, subresource, namespace, name } = r;
    return decide(r, {
      resourceRequest: true,
      path: '',
      apiGroup,
      apiVersion: '*',
      resource,
      subresource,
      namespace,
      name,
      verb,
    });
  }),
  celMethod('allowed', T.Decision, [], BOOL, function () {
    return stateOf(this, 'Decision').decision.decision === 'Allow';
  }),
  celMethod('reason', T.Decision, [], STRING, function () {
    return stateOf(this, 'Decision').decision.reason;
  }),
  celMethod('errored', T.Decision, [], BOOL, function () {
    return stateOf(this, 'Decision').decision.error !== undefined;
  }),
  celMethod('error', T.Decision, [], STRING, function () {
    return stateOf(this, 'Decision').decision.error ?? '';
  }),
];

const NON_RESOURCE = {
  resourceRequest: false,
  apiGroup: '',
  apiVersion: '',
  resource: '',
  subresource: '',
  namespace: '',
  name: '',
} as const;

let installed: Authorizer | undefined;

/**
 * Makes this process's policies see `authorizer` (an apiserver's authorizer as the tests model it)
 * until the returned function is called. Nothing in the webhook installs one.
 */
export function installAuthorizer(authorizer: Authorizer): () => void {
  installed = authorizer;
  return () => {
    if (installed === authorizer) installed = undefined;
  };
}

/** True when an authorizer is installed: `authorizer` is then declared to every expression compiled. */
export const authorizerDeclared = (): boolean => installed !== undefined;

/**
 * The `authorizer` and `authorizer.requestResource` bindings of a request (upstream's
 * NewAuthorizerVal and NewResourceAuthorizerVal), or none when no authorizer is installed.
 */
export function authorizerBindings(request: AdmissionRequest): Record<string, CelValue> {
  if (installed === undefined) return {};
  const principal = { authorize: installed, user: request.userInfo };
  return {
    authorizer: authzValue({ type: 'Authorizer', ...principal }),
    'authorizer.requestResource': authzValue({
      type: 'ResourceCheck',
      ...principal,
      group: request.resource.group,
      resource: request.resource.resource,
      subresource: request.subResource,
      namespace: request.namespace,
      name: request.name,
    }),
  };
}
