// The run's test PKI (made once, in test/support/run-setup.ts): a CA with a server certificate for
// localhost, 127.0.0.1 and ::1 and the apiserver's client certificate; and a stranger, another CA
// entirely with the same shape.
import { inject } from 'vitest';
import type { KeyAndCertificate } from '../../infra/pki/pki.js';

export interface TestPki {
  readonly ca: KeyAndCertificate;
  readonly server: KeyAndCertificate;
  readonly client: KeyAndCertificate;
}

declare module 'vitest' {
  export interface ProvidedContext {
    testPki: TestPki;
    strangerPki: TestPki;
  }
}

export const testPki = (): TestPki => inject('testPki');
export const strangerPki = (): TestPki => inject('strangerPki');
