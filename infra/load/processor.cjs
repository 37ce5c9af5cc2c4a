// Artillery processor: each virtual user is one user request to the kube-apiserver, replayed as
// the webhook calls the apiserver would make for it (the plan from plan.ts): mutating webhooks in
// order, each patch applied before the next call, then the validating ones on the final object;
// the first denial ends the request, as it does in the apiserver. Anything the apiserver would
// count as a failed call (non-200, not an AdmissionReview, wrong uid, a patch that does not
// apply, a patch from a validating webhook) fails the virtual user, so `ensure` catches it.
'use strict';

const { randomUUID } = require('node:crypto');
const { readFileSync } = require('node:fs');
// The project's own RFC 6902 implementation, the one the tests prove patches with.
const jsonpatch = require('../../node_modules/fast-json-patch');

const plan = JSON.parse(readFileSync(process.env.LOAD_PLAN, 'utf8'));
const baseUrl = (process.env.LOAD_BASE_URL || '').replace(/\/+$/, '');
// url-secret deployments: the plan's paths already carry each webhook's capability (plan.ts).

let learnedIndex = 0;

function begin(kindName, context, namespace) {
  const kind = plan.kinds[kindName];
  const review = structuredClone(kind.review);
  const request = review.request;
  const ns = namespace ?? plan.namespaces[Math.floor(Math.random() * plan.namespaces.length)];
  const name = `load-${randomUUID().slice(0, 8)}`;
  request.uid = randomUUID();
  if (request.kind.kind === 'Namespace') {
    request.name = ns;
    request.object.metadata.name = ns;
    request.object.metadata.labels['kubernetes.io/metadata.name'] = ns;
  } else {
    request.name = name;
    request.namespace = ns;
    for (const object of [request.object, request.oldObject]) {
      if (object) Object.assign(object.metadata, { name, namespace: ns });
    }
  }
  context.vars.admission = { kind: kindName, review, calls: kind.calls, next: 0, done: kind.calls.length === 0 };
}

function starter(kindName) {
  return function startUserRequest(context, events, done) {
    begin(kindName, context);
    events.emit('counter', `admission.requests.${kindName}`, 1);
    done();
  };
}

/** `before` flow: teach every load namespace to the plugins that learn namespaces. */
function learnNextNamespace(context, _events, done) {
  begin('namespaceCreate', context, plan.namespaces[learnedIndex++ % plan.namespaces.length]);
  done();
}

function hasNextCall(context, next) {
  const state = context.vars.admission;
  return next(!state.done && state.next < state.calls.length);
}

function nextCall(requestParams, context, _events, next) {
  const state = context.vars.admission;
  const call = state.calls[state.next];
  // The apiserver appends ?timeout=; routing must ignore it.
  requestParams.url = `${baseUrl}${call.path}?timeout=10s`;
  requestParams.headers = {
    ...requestParams.headers,
    'content-type': 'application/json',
    accept: 'application/json, */*',
    'user-agent': 'kube-apiserver-admission',
  };
  requestParams.json = state.review;
  delete requestParams.body;
  return next();
}

function failure(message) {
  const error = new Error(message);
  error.code = message;
  return error;
}

function checkAnswer(_requestParams, response, context, events, next) {
  const state = context.vars.admission;
  const call = state.calls[state.next];
  state.next += 1;
  const where = `${call.webhook}`;
  if (response.statusCode !== 200) return next(failure(`HTTP ${response.statusCode} from ${where}`));
  let answer;
  try {
    answer = typeof response.body === 'string' ? JSON.parse(response.body) : response.body;
  } catch {
    return next(failure(`non-JSON answer from ${where}`));
  }
  const sent = state.review;
  if (answer?.apiVersion !== sent.apiVersion || answer?.kind !== 'AdmissionReview')
    return next(failure(`not an ${sent.apiVersion} AdmissionReview from ${where}`));
  const result = answer.response;
  if (!result || result.uid !== sent.request.uid) return next(failure(`uid not echoed by ${where}`));
  if (result.allowed === false) {
    events.emit('counter', 'admission.denied', 1);
    state.done = true;
    return next();
  }
  if (result.patch !== undefined) {
    if (call.phase !== 'mutate') return next(failure(`patch from validating ${where}`));
    if (result.patchType !== 'JSONPatch') return next(failure(`patch without patchType JSONPatch from ${where}`));
    try {
      const operations = JSON.parse(Buffer.from(result.patch, 'base64').toString('utf8'));
      sent.request.object = jsonpatch.applyPatch(sent.request.object, operations, true, false).newDocument;
    } catch (error) {
      return next(failure(`patch from ${where} does not apply: ${String(error.message).split('\n')[0]}`));
    }
    events.emit('counter', 'admission.patched', 1);
  }
  if (state.next >= state.calls.length) events.emit('counter', 'admission.allowed', 1);
  return next();
}

module.exports = {
  learnNextNamespace,
  hasNextCall,
  nextCall,
  checkAnswer,
  ...Object.fromEntries(Object.keys(plan.kinds).map((kind) => [kind, starter(kind)])),
};
