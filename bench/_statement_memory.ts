/**
 * Diagnostic (issue 16): how much private memory PostgreSQL's backends gain from anonymous
 * listings of 1,000 distinct shapes (tag count x page size x cursor), measured as the RssAnon of
 * the service pool's backends in /proc before and after. Needs a PostgreSQL on this machine:
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres deno run -A bench/_statement_memory.ts
 */
import postgres from "postgres";
import { createSql } from "../db/client.ts";
import { migrate } from "../services/migrate.ts";
import { createReadModel } from "../services/read_model.ts";
import { FsStore } from "../adapters/storage/fs.ts";

const server = Deno.env.get("BENCH_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `stmt_mem_${Date.now()}`;
const admin = postgres(server, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
const sql = createSql(url);
const dir = await Deno.makeTempDir();
try {
  await migrate(sql, new FsStore(dir));
  await sql.unsafe(`
    insert into images (short_id, hash, content_type, size_bytes, width, height)
      select lpad(to_hex(i), 8, '0'), md5(i::text), 'image/png', 1000, 10, 10
      from generate_series(1, 5000) i;
    insert into tags (name) select 't' || r from generate_series(1, 60) r;
    insert into image_tags (image_id, tag_id, image_seq)
      select i.id, 1 + (i.seq * 7 + g) % 60, i.seq from images i cross join generate_series(1, 3) g
      on conflict do nothing;
    analyze`);
  const read = createReadModel(sql, undefined, 256);
  const [{ seq }] = await sql`select seq::text from images order by seq desc offset 100 limit 1`;
  const cursor = btoa(`v1:${seq}`).replace(/=+$/, "");
  const shapes: { tags: string[]; limit: number; cursor: string | null }[] = [];
  for (let i = 0; shapes.length < 1000; i++) {
    const n = Number(Deno.env.get("ONLY_N") ?? i % 51);
    shapes.push({
      tags: Array.from({ length: n }, (_, k) => `t${k + 1}`),
      limit: 1 + (Math.floor(i / 51) * 7 + n) % 200,
      cursor: i % 2 ? cursor : null,
    });
  }
  const rss = async () => {
    const pids = await admin<{ pid: number }[]>`
      select pid from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
    let kb = 0;
    for (const { pid } of pids) {
      const status = await Deno.readTextFile(`/proc/${pid}/status`);
      kb += Number(/RssAnon:\s+(\d+)/.exec(status)?.[1] ?? 0);
    }
    return { kb, backends: pids.length };
  };
  // Open every pool connection first, so that the growth is the statements', not new backends'.
  await Promise.all(Array.from({ length: 10 }, () => sql`select pg_sleep(0.05)`));
  const before = await rss();
  let next = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (next < shapes.length) await read.listImages(shapes[next++]);
  }));
  const after = await rss();
  const statements = await sql.unsafe(`select count(*)::int as n from pg_prepared_statements`);
  if (Deno.env.get("CONTEXTS")) {
    console.log(
      await sql.unsafe(`select name, count(*)::int as n, sum(total_bytes)::int as bytes
      from pg_backend_memory_contexts group by name order by 3 desc limit 12`),
    );
  }
  console.log(
    `backends: ${before.backends} -> ${after.backends}; RssAnon ${(before.kb / 1024).toFixed(1)}` +
      ` -> ${(after.kb / 1024).toFixed(1)} MB (+${((after.kb - before.kb) / 1024).toFixed(1)} MB)` +
      ` for ${shapes.length} listings of distinct shapes; this connection holds ` +
      `${statements[0].n} prepared statements`,
  );
} finally {
  await sql.end();
  await admin.unsafe(`drop database ${name} with (force)`);
  await admin.end();
  await Deno.remove(dir, { recursive: true });
}
