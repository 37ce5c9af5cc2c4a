// Table rows as [title, row] pairs, for `it.each(...)('%s', (_title, row) => ...)`: vitest's
// `$name` interpolation quotes a title and cuts it at 40 characters, and upstream's are longer.

export const titled = <T>(rows: readonly T[], title: (row: T) => string): [string, T][] =>
  rows.map((row) => [title(row), row]);
