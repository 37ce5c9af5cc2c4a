import { describe, expect, it } from 'vitest';
import { compilers } from '../../infra/native/registry.js';
import { admissionConfiguration, BENCH_PLUGINS, NOT_MEASURED } from './apiserver-plugins.js';
import { parse } from 'yaml';

describe('the apiserver bench plugins', () => {
  it('cover every plugin emit --native compiles, measured or named as not measured', () => {
    expect([...BENCH_PLUGINS.map((p) => p.name), ...NOT_MEASURED].sort()).toEqual([...compilers.keys()].sort());
  });
  it('each has an AdmissionConfiguration that parses to one plugin entry', () => {
    for (const plugin of BENCH_PLUGINS) {
      const config = parse(admissionConfiguration(plugin)) as { plugins: { name: string }[] };
      expect(config.plugins, plugin.name).toHaveLength(1);
    }
  });
});
