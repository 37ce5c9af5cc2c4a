// Placeholder: replaced by the generated table.
import type { MergeSchema } from './structured-merge.js';

export const MERGE_SCHEMA: MergeSchema = { types: {}, kinds: {} };
