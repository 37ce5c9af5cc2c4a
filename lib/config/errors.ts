/**
 * Invalid configuration: fails the start, naming the plugin and the field, the way the
 * kube-apiserver refuses to start with a bad --admission-control-config-file.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    readonly plugin: string,
    readonly field: string,
    detail: string,
  ) {
    super(`${plugin}: ${field ? `${field}: ` : ''}${detail}`);
  }
}
