// Upstream's LimitPodHardAntiAffinityTopology table (plugin/pkg/admission/antiaffinity/
// admission_test.go, TestInterPodAffinityAdmission), held once for the plugin's tests and the
// native policies' proof: each suite builds its pod around the affinity.

const HOSTNAME = 'kubernetes.io/hostname';
const selector = { matchExpressions: [{ key: 'security', operator: 'In', values: ['S2'] }] };
/** A pod affinity term of upstream's, on `topologyKey`. */
export const term = (topologyKey: string) => ({ labelSelector: selector, namespaces: [''], topologyKey });
/** Preferred terms of weight 5, on `topologyKey`. */
const preferred = (topologyKey: string) => [{ weight: 5, podAffinityTerm: term(topologyKey) }];

export interface InterPodAffinityCase {
  readonly name: string;
  readonly affinity: unknown;
  readonly errorExpected: boolean;
}

export const INTER_POD_AFFINITY_CASES: readonly InterPodAffinityCase[] = [
  { name: 'empty affinity its success', affinity: {}, errorExpected: false },
  {
    name: 'what ever topologyKey in preferredDuringSchedulingIgnoredDuringExecution, the admission should success',
    affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred('az') } },
    errorExpected: false,
  },
  {
    name: 'valid topologyKey in requiredDuringSchedulingIgnoredDuringExecution, plus any topologyKey in preferredDuringSchedulingIgnoredDuringExecution, then admission success',
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: preferred('az'),
        requiredDuringSchedulingIgnoredDuringExecution: [term(HOSTNAME)],
      },
    },
    errorExpected: false,
  },
  {
    name: 'valid topologyKey in requiredDuringSchedulingIgnoredDuringExecution then admission success',
    affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(HOSTNAME)] } },
    errorExpected: false,
  },
  {
    name: 'invalid topologyKey in requiredDuringSchedulingIgnoredDuringExecution then admission fails',
    affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(' zone ')] } },
    errorExpected: true,
  },
  {
    name: 'list of requiredDuringSchedulingIgnoredDuringExecution middle element topologyKey is not valid',
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [term(HOSTNAME), term(' zone '), term(HOSTNAME)],
      },
    },
    errorExpected: true,
  },
];
