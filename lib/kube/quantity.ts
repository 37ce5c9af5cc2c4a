// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), parsed exactly: values are
// held as integer nano-units in a BigInt, so `0.1 + 0.2` CPUs is exactly 300m and `1Ei` does not
// lose bits. Values below 1n round up, as upstream rounds them. Printing follows upstream's
// canonical form: the largest exact SI suffix (2000 → 2k, 1500m → 1500m), binary suffixes for
// quantities written with one (1Gi), plain integers below 1024 bytes.

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const NANO = 10n ** 9n;
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** DECIMAL's suffixes by exponent, from 10^-9 up in steps of 10^3. */
const DECIMAL_SUFFIXES = ['n', 'u', 'm', '', 'k', 'M', 'G', 'T', 'P', 'E'];
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const PATTERN = /^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

export class QuantityError extends Error {
  override readonly name = 'QuantityError';
}

export class Quantity {
  private constructor(
    /** The value in nano-units (10^-9). */
    readonly nano: bigint,
    readonly format: QuantityFormat,
  ) {}

  static zero(format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(0n, format);
  }

  static fromNano(nano: bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(nano, format);
  }

  static parse(text: string): Quantity {
    // As upstream's ParseQuantity: no surrounding white space, nothing empty.
    const match = PATTERN.exec(text);
    if (match === null)
      throw new QuantityError(
        `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      );
    const [, sign, number, suffix, exponent] = match;
    const [whole, fraction = ''] = number.split('.');
    let numerator = BigInt(`${whole || '0'}${fraction}`) * NANO;
    let denominator = 10n ** BigInt(fraction.length);
    let format: QuantityFormat = 'DecimalSI';
    if (suffix !== undefined && suffix in BINARY) {
      numerator *= 2n ** BigInt(BINARY[suffix]);
      format = 'BinarySI';
    } else {
      const power = exponent !== undefined ? Number(exponent) : DECIMAL[suffix ?? ''];
      if (exponent !== undefined) format = 'DecimalExponent';
      if (Math.abs(power) > 1000) throw new QuantityError('quantity exponent out of range');
      if (power >= 0) numerator *= 10n ** BigInt(power);
      else denominator *= 10n ** BigInt(-power);
    }
    // Round up to a whole nano-unit (away from zero for negatives too, as upstream's RoundUp).
    let nano = numerator / denominator;
    if (numerator % denominator !== 0n) nano += 1n;
    return new Quantity(sign === '-' ? -nano : nano, format);
  }

  add(other: Quantity): Quantity {
    return new Quantity(this.nano + other.nano, this.nano === 0n ? other.format : this.format);
  }

  sub(other: Quantity): Quantity {
    return new Quantity(this.nano - other.nano, this.format);
  }

  cmp(other: Quantity): -1 | 0 | 1 {
    return this.nano < other.nano ? -1 : this.nano > other.nano ? 1 : 0;
  }

  isZero(): boolean {
    return this.nano === 0n;
  }

  /** Upstream's canonical string. */
  toString(): string {
    if (this.nano === 0n) return '0';
    const negative = this.nano < 0n;
    const abs = negative ? -this.nano : this.nano;
    const sign = negative ? '-' : '';
    if (this.format === 'BinarySI' && abs % NANO === 0n && abs / NANO >= 1024n) {
      let value = abs / NANO;
      let unit = 0;
      const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
      while (unit < 6 && value % 1024n === 0n) {
        value /= 1024n;
        unit++;
      }
      return `${sign}${value}${suffixes[unit]}`;
    }
    // Largest power of 1000 (from nano up) that divides the value exactly.
    let exponent = -9;
    let mantissa = abs;
    while (exponent < 18 && mantissa % 1000n === 0n) {
      mantissa /= 1000n;
      exponent += 3;
    }
    if (this.format === 'DecimalExponent') return `${sign}${mantissa}${exponent === 0 ? '' : `e${exponent}`}`;
    const suffix = DECIMAL_SUFFIXES[(exponent + 9) / 3];
    return `${sign}${mantissa}${suffix}`;
  }
}

export function parseQuantity(text: string): Quantity {
  return Quantity.parse(text);
}
