// The apiserver's defaulting of built-in objects, for MutatingAdmissionPolicy: the apiserver
// defaults the object after every mutation (dispatcher.go dispatchOne: ObjectDefaulter().Default),
// so a later policy reads a sidecar's imagePullPolicy already set. Two sources:
// - the declarative defaults (`+default=`) the generated merge schema carries, for every built-in
//   kind (a container port's protocol TCP, a ReplicationController's replicas 1, volume sources'
//   defaults), applied wherever their struct appears;
// - core/v1's hand-written defaulters (pkg/apis/core/v1/defaults.go), ported for every object that
//   holds a pod spec (Pod, PodTemplate, ReplicationController, Deployment, ReplicaSet, StatefulSet,
//   DaemonSet, Job, CronJob): SetDefaults_PodSpec, _Container, _EphemeralContainer, _Probe,
//   _HTTPGetAction, _Volume, the volume sources' modes, _ObjectFieldSelector,
//   _ServiceAccountTokenProjection, _HostPathVolumeSource, and for a Pod SetDefaults_Pod (requests
//   from limits, enableServiceLinks, host-network ports) and for a ReplicationController its
//   selector and labels from the template.
// Not ported: the other groups' hand-written defaulters (apps/v1's strategies, revisionHistoryLimit
// and progressDeadlineSeconds, batch/v1's completions, parallelism and backoffLimit, Service and
// the other core/v1 kinds), quantities rounded to milli scale, and feature-gated defaults
// (pod-level resources, image volumes' pullPolicy).
import type { KubeObject } from '../admission/types.js';
import type { FieldType, MergeSchema } from './structured-merge.js';
import { typeOfKind } from './structured-merge.js';

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (v: Json): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const absent = (v: Json) => v === undefined || v === null || v === '';

/**
 * Every change goes through `write`. A first pass runs with `probing` set, on the object as given:
 * the first write it would make stops it, and only then is the object copied and defaulted for
 * real. An object already defaulted (what the apiserver sends) is neither copied nor changed.
 */
let probing = false;
const WOULD_CHANGE = new Error('the defaulters would change the object');

function write(object: JsonObject, key: string, value: Json): void {
  if (probing) throw WOULD_CHANGE;
  object[key] = value;
}

/** Sets `key` when it is absent. */
function setDefault(object: JsonObject, key: string, value: Json): void {
  if (absent(object[key])) write(object, key, value);
}

// --- the schema's declarative defaults ---

/** Per schema: each struct's defaulted fields, and which types can hold one (the walk's pruning). */
interface DefaultsIndex {
  readonly byType: ReadonlyMap<string, readonly (readonly [string, unknown])[]>;
  readonly reaches: (type: FieldType) => boolean;
}

const indexes = new WeakMap<MergeSchema, DefaultsIndex>();

function defaultsIndex(schema: MergeSchema): DefaultsIndex {
  const known = indexes.get(schema);
  if (known) return known;
  const byType = new Map<string, [string, unknown][]>();
  for (const [key, value] of Object.entries(schema.fieldDefaults ?? {})) {
    const dot = key.lastIndexOf('.');
    const list = byType.get(key.slice(0, dot)) ?? [];
    list.push([key.slice(dot + 1), value]);
    byType.set(key.slice(0, dot), list);
  }
  const named = new Map<string, boolean>();
  const reaches = (type: FieldType): boolean => {
    if ('scalar' in type) return false;
    if ('list' in type) return reaches(type.list.elem);
    if ('map' in type) return reaches(type.map.elem);
    const cached = named.get(type.named);
    if (cached !== undefined) return cached;
    named.set(type.named, false); // a recursive type reaches what its other fields reach
    const def = schema.types[type.named];
    const found =
      byType.has(type.named) ||
      (def?.elem !== undefined && reaches(def.elem)) ||
      Object.values(def?.fields ?? {}).some(reaches);
    named.set(type.named, found);
    return found;
  };
  const index = { byType, reaches };
  indexes.set(schema, index);
  return index;
}

/** Sets the declarative defaults in `value`, visiting only what can hold one. */
function schemaDefaults(index: DefaultsIndex, schema: MergeSchema, value: Json, type: FieldType | undefined): void {
  if (type === undefined || value === null || typeof value !== 'object' || !index.reaches(type)) return;
  if ('list' in type) {
    if (Array.isArray(value)) for (const element of value) schemaDefaults(index, schema, element, type.list.elem);
    return;
  }
  if ('map' in type) {
    if (isObject(value)) for (const entry of Object.values(value)) schemaDefaults(index, schema, entry, type.map.elem);
    return;
  }
  if (!('named' in type) || !isObject(value)) return;
  const named = schema.types[type.named];
  if (named?.fields === undefined) {
    if (named?.elem !== undefined)
      for (const entry of Object.values(value)) schemaDefaults(index, schema, entry, named.elem);
    return;
  }
  for (const [field, declared] of index.byType.get(type.named) ?? [])
    setDefault(value, field, structuredClone(declared));
  for (const [field, entry] of Object.entries(value)) schemaDefaults(index, schema, entry, named.fields[field]);
}

// --- core/v1's defaulters ---

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN =
  '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?';
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);

/**
 * parsers.ParseImageName's tag: the reference's tag, `latest` when it has neither tag nor digest,
 * '' when it has only a digest or does not parse (the defaulter ignores the error).
 */
export function imageTag(image: string): string {
  const match = REFERENCE.exec(image);
  if (!match || match[1].length > 255 || /^[a-f0-9]{64}$/.test(match[1])) return '';
  const [, , tag, digest] = match;
  if (tag !== undefined) return tag;
  return digest === undefined ? 'latest' : '';
}

/** SetDefaults_HTTPGetAction on a handler (probe or lifecycle hook) holding one. */
function handler(value: Json): void {
  if (!isObject(value) || !isObject(value.httpGet)) return;
  setDefault(value.httpGet, 'path', '/');
  setDefault(value.httpGet, 'scheme', 'HTTP');
}

function probe(value: Json): void {
  if (!isObject(value)) return;
  // SetDefaults_Probe: zero counts as unset, as the Go defaulter reads it.
  for (const [key, fallback] of [
    ['timeoutSeconds', 1],
    ['periodSeconds', 10],
    ['successThreshold', 1],
    ['failureThreshold', 3],
  ] as const)
    if (absent(value[key]) || value[key] === 0) write(value, key, fallback);
  handler(value);
}

function fieldRef(value: Json): void {
  if (isObject(value) && isObject(value.fieldRef)) setDefault(value.fieldRef, 'apiVersion', 'v1');
}

/** SetDefaults_Container (and _EphemeralContainer), with what its fields' defaulters set. */
function container(value: Json): void {
  if (!isObject(value)) return;
  if (absent(value.imagePullPolicy)) {
    const tag = imageTag(typeof value.image === 'string' ? value.image : '');
    write(value, 'imagePullPolicy', tag === 'latest' ? 'Always' : 'IfNotPresent');
  }
  setDefault(value, 'terminationMessagePath', '/dev/termination-log');
  setDefault(value, 'terminationMessagePolicy', 'File');
  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe']) probe(value[key]);
  if (isObject(value.lifecycle)) for (const key of ['postStart', 'preStop']) handler(value.lifecycle[key]);
  if (Array.isArray(value.env)) for (const env of value.env) if (isObject(env)) fieldRef(env.valueFrom);
}

const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

/** SetDefaults_Volume and its sources' defaulters (420 is 0644). */
function volume(value: Json): void {
  if (!isObject(value)) return;
  if (VOLUME_SOURCES.every((source) => value[source] === undefined || value[source] === null))
    write(value, 'emptyDir', {});
  for (const source of ['secret', 'configMap', 'downwardAPI', 'projected'])
    if (isObject(value[source])) setDefault(value[source] as JsonObject, 'defaultMode', 420);
  if (isObject(value.hostPath)) setDefault(value.hostPath, 'type', '');
  const items = (source: Json) => (isObject(source) && Array.isArray(source.items) ? source.items : []);
  for (const item of items(value.downwardAPI)) fieldRef(item);
  if (isObject(value.projected) && Array.isArray(value.projected.sources))
    for (const source of value.projected.sources) {
      if (!isObject(source)) continue;
      for (const item of items(source.downwardAPI)) fieldRef(item);
      if (isObject(source.serviceAccountToken)) setDefault(source.serviceAccountToken, 'expirationSeconds', 3600);
    }
}

const list = (value: Json): Json[] => (Array.isArray(value) ? value : []);

/** SetDefaults_PodSpec and the defaulters of what a pod spec holds. */
function podSpec(spec: Json): void {
  if (!isObject(spec)) return;
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'restartPolicy', 'Always');
  if (spec.securityContext === undefined || spec.securityContext === null) write(spec, 'securityContext', {});
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'schedulerName', 'default-scheduler');
  for (const v of list(spec.volumes)) volume(v);
  for (const c of [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)])
    container(c);
}

/** SetDefaults_Pod: only on a Pod, not on a pod template. */
function pod(object: JsonObject): void {
  const spec = object.spec;
  if (!isObject(spec)) return;
  for (const c of [...list(spec.containers), ...list(spec.initContainers)]) {
    if (!isObject(c) || !isObject(c.resources) || !isObject(c.resources.limits)) continue;
    const resources = c.resources as JsonObject & { limits: JsonObject };
    const missing = Object.entries(resources.limits).filter(
      ([key]) => !isObject(resources.requests) || !(key in resources.requests),
    );
    if (missing.length === 0) continue;
    if (!isObject(resources.requests)) write(resources, 'requests', {});
    for (const [key, value] of missing) write(resources.requests as JsonObject, key, value);
  }
  setDefault(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork === true)
    for (const c of [...list(spec.containers), ...list(spec.initContainers)])
      for (const port of isObject(c) ? list(c.ports) : [])
        if (isObject(port) && (absent(port.hostPort) || port.hostPort === 0))
          write(port, 'hostPort', port.containerPort);
  podSpec(spec);
}

const spec = (o: Json): Json => (isObject(o) ? o.spec : undefined);
const template = (o: Json): Json => (isObject(o) ? o.template : undefined);

/** Where each kind keeps its pod template's spec. */
const POD_TEMPLATE_SPECS: Readonly<Record<string, (object: JsonObject) => Json>> = {
  '/v1/PodTemplate': (o) => spec(template(o)),
  '/v1/ReplicationController': (o) => spec(template(spec(o))),
  'apps/v1/Deployment': (o) => spec(template(spec(o))),
  'apps/v1/ReplicaSet': (o) => spec(template(spec(o))),
  'apps/v1/StatefulSet': (o) => spec(template(spec(o))),
  'apps/v1/DaemonSet': (o) => spec(template(spec(o))),
  'batch/v1/Job': (o) => spec(template(spec(o))),
  'batch/v1/CronJob': (o) => spec(template(spec(isObject(spec(o)) ? (spec(o) as JsonObject).jobTemplate : undefined))),
};

/** SetDefaults_ReplicationController: selector and labels from the template's labels. */
function replicationController(object: JsonObject): void {
  const rcSpec = object.spec;
  const labels =
    isObject(rcSpec) && isObject(rcSpec.template) && isObject(rcSpec.template.metadata)
      ? rcSpec.template.metadata.labels
      : undefined;
  if (!isObject(labels) || !isObject(rcSpec)) return;
  if (!isObject(rcSpec.selector) || Object.keys(rcSpec.selector).length === 0) write(rcSpec, 'selector', { ...labels });
  const metadata = object.metadata;
  if (!isObject(metadata)) write(object, 'metadata', { labels: { ...labels } });
  else if (!isObject(metadata.labels) || Object.keys(metadata.labels).length === 0)
    write(metadata, 'labels', { ...labels });
}

function defaultInPlace(schema: MergeSchema, object: JsonObject, key: string, type: FieldType): void {
  if (key === '/v1/Pod') pod(object);
  else if (key in POD_TEMPLATE_SPECS) {
    if (key === '/v1/ReplicationController') replicationController(object);
    podSpec(POD_TEMPLATE_SPECS[key](object));
  }
  schemaDefaults(defaultsIndex(schema), schema, object, type);
}

/**
 * The object as the apiserver's defaulter leaves it: `object` itself when nothing is to be set (it
 * is never changed), else a defaulted copy.
 */
export function defaultObject(schema: MergeSchema, object: KubeObject): KubeObject {
  const apiVersion = String(object.apiVersion ?? '');
  const kind = String(object.kind ?? '');
  const type = typeOfKind(schema, apiVersion, kind);
  if (type === undefined) return object;
  const key = `${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}/${kind}`;
  probing = true;
  try {
    defaultInPlace(schema, object as JsonObject, key, type);
    return object;
  } catch (error) {
    if (error !== WOULD_CHANGE) throw error;
  } finally {
    probing = false;
  }
  // A JSON document: its JSON round trip is an exact copy, and faster than structuredClone.
  const copy = JSON.parse(JSON.stringify(object)) as JsonObject;
  defaultInPlace(schema, copy, key, type);
  return copy as KubeObject;
}
