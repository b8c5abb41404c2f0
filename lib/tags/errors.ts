/** Errors of the tag rules, with the stable `code` the API answers with. */

/** A refused rule change: 422 (or `status`) with `code`, e.g. `alias_chain`. */
export class TagRuleError extends Error {
  override name = "TagRuleError";
  constructor(readonly code: string, message: string, readonly status: 404 | 422 = 422) {
    super(message);
  }
}
