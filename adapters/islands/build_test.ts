import assert from "node:assert/strict";
import { buildAssets, genSource, listIslands } from "./build.ts";
import { loadManifest } from "./manifest.ts";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("buildAssets() writes content-hashed files and a manifest", async () => {
  const outDir = await Deno.makeTempDir({ prefix: "build_test_" });
  try {
    const manifest = await buildAssets({ outDir, writeGen: false });
    assert.deepEqual(loadManifest(outDir), manifest);
    const hashed = /^\/_static\/[A-Za-z]+-[A-Za-z0-9]{8}\.(js|css|svg)$/;
    assert.match(manifest.boot, hashed);
    assert.match(manifest.css, hashed);
    assert.deepEqual(Object.keys(manifest.islands).sort(), listIslands(root));
    assert.ok(manifest.islands.Library, "the library island is built");
    for (const url of [manifest.boot, manifest.css, ...Object.values(manifest.islands)]) {
      assert.match(url, hashed);
      const file = `${outDir}/static/${url.slice("/_static/".length)}`;
      assert.ok((await Deno.stat(file)).size > 0, file);
      assert.ok((await Deno.stat(`${file}.gz`)).size > 0, `${file}.gz`);
    }
    const chunks = Object.values(manifest.imports).flat();
    assert.ok(chunks.some((u) => /\/chunk-/.test(u)), "shared chunks are split out");
    const boot = await Deno.readTextFile(`${outDir}/static/${manifest.boot.slice(9)}`);
    assert.ok(boot.includes("data-island"), "the boot module looks for island wrappers");
  } finally {
    await Deno.remove(outDir, { recursive: true });
  }
});

Deno.test("genSource() imports and registers every island by name", () => {
  const src = genSource(["Alpha", "Beta"]);
  assert.ok(src.includes(`import Alpha from "./islands/Alpha.tsx";`));
  assert.ok(
    src.includes(
      `export const islands: Record<string, IslandComponent> = {\n  Alpha,\n  Beta,\n};`,
    ),
  );
});

Deno.test("islands.gen.ts is up to date with islands/", async () => {
  const current = await Deno.readTextFile(`${root}/islands.gen.ts`);
  assert.equal(current, genSource(listIslands(root)), "run deno task build");
});
