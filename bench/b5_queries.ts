/**
 * B5: latency of the read queries on the 1,000,000-image database (`deno task bench:seed`),
 * through the service's HTTP API at concurrency 8. Each query's SQL (captured from the same
 * db/ functions the read model calls, with postgres.js `debug`) is run under
 * EXPLAIN (ANALYZE, BUFFERS) and saved in bench/plans/<case>.txt. The image listings run twice:
 * as configured (a URL repeated with no write in between is served from the listing cache), and
 * with LISTING_CACHE_ENTRIES=0, where every request runs its query.
 */
import postgres from "postgres";
import { listImages } from "../db/images.ts";
import { listTags } from "../db/tags.ts";
import { encodeCursor } from "../lib/read_model.ts";
import type { ListTagsQuery } from "../lib/types.ts";
import {
  benchMain,
  cpuMs,
  databaseUrl,
  load,
  ms,
  type Row,
  type ServiceProcess,
  startService,
} from "./_lib.ts";
import { seed, SEED_DB } from "./seed.ts";

const PLANS_DIR = new URL("./plans/", import.meta.url);

interface Case {
  name: string;
  path: string;
  /** The same call the read model makes for this request. */
  sql: (sql: postgres.Sql) => Promise<unknown>;
}

/** What the API passes down for a page: limit + 1 rows, tags as given. */
const page = (tags: string[], beforeSeq: string | null = null) => (sql: postgres.Sql) =>
  listImages(sql, { tags, limit: 51, beforeSeq });
const tagList = (q: Partial<ListTagsQuery>) => (sql: postgres.Sql) =>
  listTags(sql, { sort: "name", limit: 100, offset: 0, ...q });

async function explain(url: string, c: Case): Promise<string> {
  const captured: { query: string; params: unknown[] }[] = [];
  const traced = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_conn, query, params) => captured.push({ query, params: params as unknown[] }),
  });
  // The service's session settings (db/client.ts), so the plans are the ones it gets.
  const plain = postgres(url, { max: 1, onnotice: () => {}, connection: { jit: "off" } });
  try {
    await c.sql(traced);
    const out = [`# ${c.name}`, `# GET ${c.path}`, ""];
    for (const { query, params } of captured) {
      if (query.includes("pg_catalog.pg_type")) continue; // postgres.js's own type lookup
      out.push("-- query:", query.trim(), `-- parameters: ${JSON.stringify(params)}`, "");
      const rows = await plain.unsafe(
        `explain (analyze, buffers) ${query}`,
        params as postgres.ParameterOrJSON<never>[],
      );
      out.push("-- custom plan (this execution's parameters):");
      out.push(...rows.map((r) => r["QUERY PLAN"] as string), "");
      if (params.length === 0) continue;
      // The service's statements are prepared by postgres.js; after 5 executions PostgreSQL may
      // keep a generic plan. Show that one too.
      const literal = (v: unknown) => `'${String(v).replaceAll("'", "''")}'`;
      await plain.unsafe(`prepare bench_q as ${query}`);
      await plain.unsafe(`set plan_cache_mode = force_generic_plan`);
      const generic = await plain.unsafe(
        `explain (analyze, buffers) execute bench_q(${params.map(literal).join(", ")})`,
      );
      await plain.unsafe(`reset plan_cache_mode`);
      await plain.unsafe(`deallocate bench_q`);
      out.push("-- generic plan (what a prepared statement may switch to):");
      out.push(...generic.map((r) => r["QUERY PLAN"] as string), "");
    }
    return out.join("\n");
  } finally {
    await traced.end();
    await plain.end();
  }
}

/** Pids of every process named postgres (the server and its backends). */
async function postgresPids(): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const comm = await Deno.readTextFile(`/proc/${e.name}/comm`).catch(() => "");
    if (comm.trim() === "postgres") out.push(Number(e.name));
  }
  return out;
}

/** CPU ms of `pids` together (gone processes count as 0). */
async function sumCpu(pids: number[]): Promise<number> {
  const all = await Promise.all(pids.map((p) => cpuMs(p).catch(() => 0)));
  return all.reduce((a, b) => a + b, 0);
}

if (import.meta.main) {
  await benchMain("B5", "read queries on 1,000,000 images, concurrency 8", async (notes) => {
    const seeded = await seed();
    notes.push(
      seeded.seeded
        ? `seeded ${SEED_DB} now (${seeded.seconds.toFixed(0)} s)`
        : `${SEED_DB} already seeded (kept between runs; 'deno task bench:seed --force' reseeds)`,
    );
    const url = databaseUrl(SEED_DB);
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    const [counts] = await admin`select (select count(*) from images)::int as images,
      (select count(*) from tags)::int as tags, (select count(*) from image_tags)::int as links`;
    const [after] = await admin`select seq::text as seq from images order by seq desc
                                offset 9999 limit 1`;
    const [afterT1] = await admin`select it.image_seq::text as seq from image_tags it
      join tags t on t.id = it.tag_id where t.name = 't1'
      order by it.image_seq desc offset 9999 limit 1`;
    const tagCounts = await admin<{ name: string; image_count: number }[]>`
      select name, image_count from tags where name in ('t1', 't2', 't3', 't9000')`;
    await admin.end();
    notes.push(
      `data: ${counts.images} images, ${counts.tags} tags, ${counts.links} links; tag sizes ${
        tagCounts.map((t) => `${t.name}=${t.image_count}`).join(", ")
      }`,
    );
    const cursor = encodeCursor(after.seq);
    const cursorT1 = encodeCursor(afterT1.seq);
    const cases: Case[] = [
      { name: "newest", path: "/api/v1/images", sql: page([]) },
      { name: "tag_popular", path: "/api/v1/images?tags=t1", sql: page(["t1"]) },
      { name: "tag_rare", path: "/api/v1/images?tags=t9000", sql: page(["t9000"]) },
      { name: "two_tags", path: "/api/v1/images?tags=t2,t3", sql: page(["t2", "t3"]) },
      {
        name: "cursor_after_10000",
        path: `/api/v1/images?cursor=${cursor}`,
        sql: page([], after.seq),
      },
      {
        name: "tag_popular_cursor_after_10000",
        path: `/api/v1/images?tags=t1&cursor=${cursorT1}`,
        sql: page(["t1"], afterT1.seq),
      },
      {
        name: "tags_count_desc",
        path: "/api/v1/tags?sort=count_desc",
        sql: tagList({ sort: "count_desc" }),
      },
      { name: "tags_q3", path: "/api/v1/tags?q=t12", sql: tagList({ q: "t12" }) },
      { name: "tags_q2", path: "/api/v1/tags?q=t1", sql: tagList({ q: "t1" }) },
    ];

    /** p50/p99 of `c` at concurrency 8 (and 1) on `svc`, and its CPU per request. */
    async function measure(svc: ServiceProcess, c: Case, label: string, target: boolean) {
      const get = () => fetch(`${svc.base}${c.path}`);
      // Warm up (opens the service's database connections), then find their backends.
      await load({ concurrency: 8, durationMs: 500, maxRequests: 200 }, get);
      const pgPids = await postgresPids();
      const cpu0 = [await cpuMs(svc.pid), await sumCpu(pgPids), await cpuMs(Deno.pid)];
      const r = await load({ concurrency: 8, durationMs: 4000, maxRequests: 4000 }, get);
      const cpu1 = [await cpuMs(svc.pid), await sumCpu(pgPids), await cpuMs(Deno.pid)];
      const per = cpu1.map((v, i) => ((v - cpu0[i]) / Math.max(1, r.requests)).toFixed(2));
      // The same query one at a time: what is left once nothing queues for the two cores.
      const one = await load({ concurrency: 1, durationMs: 1500, maxRequests: 1000 }, get);
      const row: Row = {
        metric: `${label}GET ${c.path.replace(/cursor=[^&]+/, "cursor=…")} (${r.requests} req, ${
          r.rps.toFixed(0)
        } req/s${r.errors ? `, ${r.errors} errors: ${r.firstError}` : ""})`,
        value: `p50 ${ms(r.p50)} / p99 ${ms(r.p99)}`,
        baseline: `concurrency 1: p50 ${ms(one.p50)} / p99 ${ms(one.p99)}`,
        ratio: "-",
        target: target ? "p99 < 20 ms" : "- (diagnostic)",
        met: target ? r.p99 < 20 && r.errors === 0 : null,
      };
      return { row, cpu: `${c.name} ${per.join(" / ")}` };
    }

    const rows: Row[] = [];
    const cpuNotes: string[] = [];
    const svc = await startService(url, null);
    for (const c of cases) {
      const { row, cpu } = await measure(svc, c, `${c.name}: `, true);
      rows.push(row);
      cpuNotes.push(cpu);
    }
    await svc.stop();
    // The listings again with nothing kept between requests: what each query costs at a million
    // images. The run above repeats each URL with no write in between, so its pages come from
    // the listing cache after the first (LISTING_CACHE_ENTRIES, lib/http/snapshot_cache.ts).
    const uncached = await startService(url, null, { LISTING_CACHE_ENTRIES: "0" });
    const uncachedCpu: string[] = [];
    for (const c of cases.filter((c) => c.path.startsWith("/api/v1/images"))) {
      const { row, cpu } = await measure(
        uncached,
        c,
        `${c.name}, LISTING_CACHE_ENTRIES=0: `,
        false,
      );
      rows.push(row);
      uncachedCpu.push(cpu);
    }
    await uncached.stop();
    notes.push(
      `CPU ms per request (service / all postgres processes / load generator): ${
        cpuNotes.join("; ")
      }; with LISTING_CACHE_ENTRIES=0: ${uncachedCpu.join("; ")}`,
    );

    await Deno.mkdir(PLANS_DIR, { recursive: true });
    for (const c of cases) {
      await Deno.writeTextFile(new URL(`${c.name}.txt`, PLANS_DIR), await explain(url, c));
    }
    notes.push(
      "plans: bench/plans/*.txt (EXPLAIN ANALYZE of a custom and of the generic plan; the " +
        "service's listing statements keep the generic one after 5 runs, tests/db_listing_test.ts)",
    );
    return rows;
  });
}
