/**
 * Tags: name rules (names.ts), the rules between tags (aliases, implications, rename and merge;
 * SQL in db/tag_rules.ts, errors.ts), and applying implications in the background
 * (implications.ts).
 */
export * from "./names.ts";
export { TagRuleError } from "./errors.ts";
export {
  applyImplications,
  type ApplyResult,
  IMPLICATIONS_QUEUE,
  implicationsJob,
  scheduleImplications,
} from "./implications.ts";
