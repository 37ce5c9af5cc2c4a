import { ConfigError } from '../../lib/config/errors.js';

/** The ConfigError `configure` throws; fails the test when it accepts the configuration instead. */
export function configErrorOf(configure: () => unknown): ConfigError {
  try {
    configure();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError, but the configuration was accepted');
}
