/**
 * The tag rules (issue 20): aliases, implications, rename and merge (applying implications to the
 * images that already carry a tag is in apply_implications.ts). Every change holds the tag rules'
 * lock exclusively
 * (db/tags.ts TAG_RULES_LOCK), so it is serialised with every other change and with the tag writes.
 */
import type postgres from "postgres";
import { TagRuleError } from "../domain/tag_rule_errors.ts";
import type { TagAliasDto, TagImplicationDto } from "../domain/types.ts";
import { type Sql, transaction } from "./client.ts";
import { resolveTagNames, TAG_RULES_LOCK } from "./tags.ts";

type Tx = postgres.TransactionSql;

/** Runs `fn` in a transaction holding the tag rules' lock exclusively. */
function ruleChange<T>(sql: Sql, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return againIfImageVanished(() =>
    transaction(sql, async (tx) => {
      await tx`select pg_advisory_xact_lock(${TAG_RULES_LOCK.toString()}::bigint)`;
      return await fn(tx);
    })
  );
}

/**
 * Runs `fn` again (a few times) when it linked a tag to an image that a concurrent delete
 * removed: moving or adding links reads them first, and the image may be gone by the insert.
 */
export async function againIfImageVanished<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= 3 || (e as { code?: string })?.code !== "23503") throw e;
    }
  }
}

/** The ID of the tag named `name`, or null. */
async function tagId(tx: Tx, name: string): Promise<string | null> {
  const [row] = await tx<{ id: string }[]>`select id::text from tags where name = ${name}`;
  return row?.id ?? null;
}

/** The ID of the tag named `name`, created when it is missing. */
async function ensureTag(tx: Tx, name: string): Promise<string> {
  await tx`insert into tags (name) values (${name}) on conflict (name) do nothing`;
  return (await tagId(tx, name))!;
}

/** The alias's target if `name` is an alias, else null. */
async function aliasTarget(tx: Tx, name: string): Promise<string | null> {
  const [row] = await tx<{ name: string }[]>`
    select t.name from tag_aliases a join tags t on t.id = a.target_id where a.alias = ${name}`;
  return row?.name ?? null;
}

/** Throws `implication_cycle` if tag `id` now implies itself through others. */
async function refuseCycle(tx: Tx, id: string) {
  const [{ cycle }] = await tx<{ cycle: boolean }[]>`
    with recursive reach(id) as (
      select implied_id from tag_implications where tag_id = ${id}
      union
      select ti.implied_id from tag_implications ti join reach r on ti.tag_id = r.id)
    select exists (select 1 from reach where id = ${id}) as cycle`;
  if (cycle) {
    throw new TagRuleError("implication_cycle", "That implication would make a cycle");
  }
}

/** Whether tag `id` implies anything (then its images need the implications applied). */
async function impliesAnything(tx: Tx, id: string): Promise<boolean> {
  const [row] = await tx`select 1 from tag_implications where tag_id = ${id} limit 1`;
  return !!row;
}

/**
 * Moves everything of tag `from` into tag `into` and deletes `from`: image links (de-duplicated;
 * the triggers keep both counts exact), implications both ways (a cycle this makes is refused),
 * and the aliases that pointed at it. Returns whether `into` implies anything afterwards.
 */
async function mergeInto(tx: Tx, from: string, into: string): Promise<boolean> {
  // Both count rows in ID order, like every writer, before the triggers update them.
  await tx`select 1 from tags where id in (${from}, ${into}) order by id for update`;
  await tx`insert into image_tags (image_id, tag_id, image_seq)
    select image_id, ${into}, image_seq from image_tags where tag_id = ${from}
    on conflict do nothing`;
  await tx`delete from image_tags where tag_id = ${from}`;
  await tx`insert into tag_implications (tag_id, implied_id)
    select ${into}, implied_id from tag_implications where tag_id = ${from} and implied_id <> ${into}
    on conflict do nothing`;
  await tx`insert into tag_implications (tag_id, implied_id)
    select tag_id, ${into} from tag_implications where implied_id = ${from} and tag_id <> ${into}
    on conflict do nothing`;
  await tx`update tag_aliases set target_id = ${into} where target_id = ${from}`;
  await tx`delete from tags where id = ${from}`;
  await refuseCycle(tx, into);
  return await impliesAnything(tx, into);
}

/** What a rule change did, and the tag whose implications must now be applied, if any. */
export interface RuleChange {
  created: boolean;
  /** Apply the implications of this tag to its images (services/tags/implications.ts). */
  applyTo: string | null;
}

/**
 * Makes `alias` mean `target` (both normalised, distinct). A tag named `alias` is merged into the
 * target. Refuses chains: the target may not be an alias, nor the alias any alias's target.
 */
export function putAlias(sql: Sql, alias: string, target: string): Promise<RuleChange> {
  return ruleChange(sql, async (tx) => {
    const targetOf = await aliasTarget(tx, target);
    if (targetOf !== null) {
      throw new TagRuleError(
        "alias_chain",
        `"${target}" is itself an alias of "${targetOf}": alias "${alias}" to "${targetOf}"`,
      );
    }
    const [pointing] = await tx<{ alias: string }[]>`
      select a.alias from tag_aliases a join tags t on t.id = a.target_id
      where t.name = ${alias} limit 1`;
    if (pointing) {
      throw new TagRuleError(
        "alias_chain",
        `"${alias}" is the target of alias "${pointing.alias}", so it cannot be an alias itself`,
      );
    }
    const into = await ensureTag(tx, target);
    const from = await tagId(tx, alias);
    const apply = from !== null && await mergeInto(tx, from, into);
    const [row] = await tx<{ inserted: boolean }[]>`
      insert into tag_aliases (alias, target_id) values (${alias}, ${into})
      on conflict (alias) do update set target_id = excluded.target_id
      returning (xmax = 0) as inserted`;
    return { created: row.inserted, applyTo: apply ? into : null };
  });
}

/** Removes alias `alias`; false when there was none. Its name becomes free for a plain tag. */
export async function deleteAlias(sql: Sql, alias: string): Promise<boolean> {
  return await ruleChange(sql, async (tx) => {
    const rows = await tx`delete from tag_aliases where alias = ${alias} returning 1`;
    return rows.length > 0;
  });
}

/** The aliases, by alias name. */
export function listAliases(
  sql: Sql,
  page: { limit: number; offset: number },
): Promise<TagAliasDto[]> {
  return sql<TagAliasDto[]>`
    select a.alias, t.name as target from tag_aliases a join tags t on t.id = a.target_id
    order by a.alias limit ${page.limit} offset ${page.offset}`;
}

/**
 * Sets what `tag` implies, replacing its earlier implications; aliases among the names mean their
 * targets, and missing tags are created. Refuses a cycle. Returns the names as resolved.
 */
export function putImplications(
  sql: Sql,
  tag: string,
  implies: string[],
): Promise<RuleChange & { tag: string; implies: string[] }> {
  return ruleChange(sql, async (tx) => {
    const [name] = await resolveTagNames(tx, [tag]);
    const targets = (await resolveTagNames(tx, implies)).sort();
    if (targets.includes(name)) {
      throw new TagRuleError("implication_cycle", `"${name}" cannot imply itself`);
    }
    const id = await ensureTag(tx, name);
    await tx`insert into tags (name) select unnest(${targets}::text[]) on conflict (name) do nothing`;
    const [{ had }] = await tx<{ had: boolean }[]>`
      with gone as (delete from tag_implications where tag_id = ${id} returning 1)
      select count(*) > 0 as had from gone`;
    await tx`insert into tag_implications (tag_id, implied_id)
      select ${id}, t.id from tags t where t.name = any(${targets}::text[])`;
    await refuseCycle(tx, id);
    return { created: !had, applyTo: targets.length > 0 ? id : null, tag: name, implies: targets };
  });
}

/** Removes every implication of `tag`; false when it had none. Images keep their tags. */
export function deleteImplications(sql: Sql, tag: string): Promise<boolean> {
  return ruleChange(sql, async (tx) => {
    const [name] = await resolveTagNames(tx, [tag]);
    const rows = await tx`delete from tag_implications
      where tag_id = (select id from tags where name = ${name}) returning 1`;
    return rows.length > 0;
  });
}

/** The implications, one entry per implying tag with its implied tags by name, by tag name. */
export function listImplications(
  sql: Sql,
  page: { limit: number; offset: number },
): Promise<TagImplicationDto[]> {
  return sql<TagImplicationDto[]>`
    select t.name as tag,
      (select array_agg(i.name order by i.name) from tag_implications ti
       join tags i on i.id = ti.implied_id where ti.tag_id = t.id) as implies
    from tags t where exists (select 1 from tag_implications ti where ti.tag_id = t.id)
    order by t.name limit ${page.limit} offset ${page.offset}`;
}

/**
 * Renames tag `from` to `to` (both normalised). When `to` exists the two merge: links are
 * de-duplicated, counts stay exact, and aliases and implications of `from` follow. Throws
 * `tag_not_found` for an unknown tag and `name_is_alias` when `to` is an alias. Returns the tag's
 * image count under its new name.
 */
export function renameTag(
  sql: Sql,
  from: string,
  to: string,
): Promise<RuleChange & { merged: boolean; image_count: number }> {
  return ruleChange(sql, async (tx) => {
    const id = await tagId(tx, from);
    if (id === null) throw new TagRuleError("tag_not_found", `There is no tag "${from}"`);
    const target = await aliasTarget(tx, to);
    if (target !== null) {
      throw new TagRuleError(
        "name_is_alias",
        `"${to}" is an alias of "${target}": rename to "${target}" to merge into it`,
      );
    }
    const into = await tagId(tx, to);
    let apply = false;
    if (into === null) await tx`update tags set name = ${to} where id = ${id}`;
    else if (into !== id) apply = await mergeInto(tx, id, into);
    const [{ image_count }] = await tx<{ image_count: number }[]>`
      select image_count from tags where name = ${to}`;
    return {
      created: false,
      merged: into !== null && into !== id,
      applyTo: apply ? into : null,
      image_count,
    };
  });
}
