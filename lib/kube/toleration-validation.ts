// pkg/apis/core/validation ValidateTolerations, for tolerations that reach us outside a pod (plugin
// configuration), so an invalid one fails at start as the apiserver would refuse it.
import type { FieldError, FieldPath } from '../admission/field.js';
import { invalid, notSupported } from '../admission/field.js';
import { isQualifiedName } from './resources.js';
import type { Toleration } from './tolerations.js';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function validateTolerations(tolerations: readonly Toleration[], path: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  tolerations.forEach((t, i) => {
    const at = path.index(i);
    const key = t.key ?? '';
    const operator = t.operator ?? '';
    const value = t.value ?? '';
    const effect = t.effect ?? '';
    if (key !== '' && !isQualifiedName(key)) {
      errors.push(
        invalid(
          at.child('key'),
          key,
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        ),
      );
    }
    if (key === '' && operator !== 'Exists') {
      errors.push(
        invalid(
          at.child('operator'),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute') {
      errors.push(invalid(at.child('effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === 'Equal' || operator === '') {
      if (value.length > 63 || !LABEL_VALUE.test(value)) {
        errors.push(
          invalid(
            at.child('operator'),
            value,
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
          ),
        );
      }
    } else if (operator === 'Exists') {
      if (value !== '')
        errors.push(invalid(at.child('operator'), t, "value must be empty when `operator` is 'Exists'"));
    } else {
      errors.push(notSupported(at.child('operator'), operator, ['Equal', 'Exists']));
    }
    if (effect !== '' && !EFFECTS.includes(effect)) errors.push(notSupported(at.child('effect'), effect, EFFECTS));
  });
  return errors;
}
