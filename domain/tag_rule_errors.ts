/** Errors of the tag rules, with the stable `code` the API answers with (domain/errors.ts). */
import { AppError, type ErrorCode } from "./errors.ts";

/** The codes of refused rule changes; each one's status is its row of domain/errors.ts. */
export type TagRuleCode = Extract<
  ErrorCode,
  | "alias_chain"
  | "alias_self"
  | "alias_not_found"
  | "implication_cycle"
  | "implication_not_found"
  | "tag_not_found"
  | "name_is_alias"
  | "invalid_tag_name"
>;

/** A refused rule change, e.g. `alias_chain` (422) or `tag_not_found` (404). */
export class TagRuleError extends AppError {
  override name = "TagRuleError";
  constructor(code: TagRuleCode, message: string) {
    super(code, message);
  }
}
