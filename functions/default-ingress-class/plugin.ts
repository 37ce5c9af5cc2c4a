// DefaultIngressClass: an Ingress that names no IngressClass gets the cluster's default one, so
// that exactly one controller picks it up without every author knowing which. Upstream:
// plugin/pkg/admission/network/defaultingressclass.
//
// Upstream lists IngressClasses from an informer; here they are the IngressClasses this plugin's
// learning webhook saw written, and those `npm run sync` loaded (run it first: a default class
// created before the webhook was installed is otherwise unknown). With no learned default, an
// Ingress is left as it is, as upstream leaves it when the cluster has none.
//
// Served as upstream's Admit (a mutating webhook, CREATE of Ingresses) and a twin of our own that
// refuses only what the mutation would have fixed: a new Ingress still without a class while a
// default is known. The twin fails open: a default class is a convenience, not a boundary.

import { allowed, errored, forbidden, patched } from '../../lib/admission/decision.js';
import { FieldPath, required } from '../../lib/admission/field.js';
import type { ObjectGuard, PluginContext } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, mutatingWithTwin } from '../../lib/admission/plugin.js';
import type { LearnedObject } from '../../lib/admission/ports.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { newestDefault } from '../../lib/kube/classes.js';
import { ofKind } from '../../lib/kube/objects.js';

/** networkingv1.AnnotationIsDefaultIngressClass */
const IS_DEFAULT_INGRESS_CLASS = 'ingressclass.kubernetes.io/is-default-class';
/** networkingv1beta1.AnnotationIngressClass: the class before spec.ingressClassName. */
const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

const NEW_INGRESSES = judgedResource(['CREATE'], 'networking.k8s.io', 'ingresses', 'Namespaced');

/** apierrors.NewInternalError, as upstream answers an object that is not an Ingress. */
function notAnIngress(request: AdmissionRequest) {
  const { group, version, kind } = request.kind;
  return errored(
    500,
    'InternalError',
    `Internal error occurred: Expected Ingress resource, got: ${group}/${version}, Kind=${kind}`,
  );
}

const INGRESSES: ObjectGuard<KubeObject> = {
  ignore: NEW_INGRESSES.ignore,
  accepts: ofKind<KubeObject>('Ingress'),
  otherwise: notAnIngress,
};

const isDefault = (object: KubeObject) =>
  (object.metadata?.annotations as Record<string, unknown> | undefined)?.[IS_DEFAULT_INGRESS_CLASS] === 'true';

/** spec.ingressClassName set (even to ""), or the annotation present (even empty). */
function hasClass(ingress: KubeObject): boolean {
  const name = (ingress.spec as { ingressClassName?: unknown } | undefined)?.ingressClassName;
  if (name !== undefined && name !== null) return true;
  return Object.hasOwn(ingress.metadata?.annotations ?? {}, INGRESS_CLASS_ANNOTATION);
}

async function defaultClass({ state }: PluginContext<undefined>): Promise<LearnedObject | undefined> {
  return newestDefault(await state.learnedObjects.list('ingressclasses'), isDefault);
}

export default definePlugin({
  metadata: {
    upstreamName: 'DefaultIngressClass',
    name: 'default-ingress-class',
    summary: 'Sets the default IngressClass on Ingresses that name none (learned IngressClasses).',
    ...mutatingWithTwin(NEW_INGRESSES.rules, { twinFailurePolicy: 'Ignore' }),
    writes: false,
    needs: ['ingressclasses'],
    systemNamespaces: 'exclude',
  },

  admit: guardedPhase(INGRESSES, async (ingress, _request, context) => {
    if (hasClass(ingress)) return allowed();
    const def = await defaultClass(context);
    if (!def) return allowed();
    return patched({ ...ingress, spec: { ...(ingress.spec as object | undefined), ingressClassName: def.name } });
  }),

  validate: guardedPhase(INGRESSES, async (ingress, request, context) => {
    if (hasClass(ingress)) return allowed();
    const def = await defaultClass(context);
    if (!def) return allowed();
    const error = required(
      FieldPath.of('spec', 'ingressClassName'),
      `the default IngressClass ${JSON.stringify(def.name)} was not set (DefaultIngressClass sets it)`,
    );
    return forbidden(request, [error]);
  }),
});
