/**
 * The layering, checked on the module graph (CONVENTIONS.md, "Layers are checked"): every import
 * of every module outside tests/ and bench/ (type-only and dynamic ones included, as `deno info`
 * resolves them) goes where the table below allows. A path says its layer; what a layer may
 * import is one row. tests/reader_test.ts checks the reader's graph on its own.
 */
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../", import.meta.url));

/** A layer, by where its files are. The first matching prefix wins. */
const LAYERS: [prefix: string, layer: string][] = [
  ["domain/", "domain"],
  ["client/", "client"],
  ["db/", "db"],
  ["adapters/", "adapters"],
  ["services/", "services"],
  ["api/", "api"],
  ["routes/", "routes"],
  ["islands.gen.ts", "routes"], // the pages' island registry, written by adapters/islands/build.ts
  ["islands/", "islands"],
  ["components/", "components"],
  ["wiring/", "wiring"],
  ["main.ts", "entry"],
  ["reader.ts", "entry"],
  ["scripts/", "entry"],
];

/**
 * What each layer may import: layers, and outside packages (`*`: any; a name: that package or
 * a `node:` module). db/ imports the domain and its driver only: pages get their data through
 * services/read_model.ts; API handlers of one query call db/ directly (a pass-through service per
 * query would add nothing). What runs in the browser (islands, components, client/) imports
 * neither db/ nor adapters/ nor config: only the domain and Preact.
 */
const RULES: Record<string, { layers: string[]; packages: string[] }> = {
  domain: { layers: ["domain"], packages: ["node:crypto"] },
  client: { layers: ["client", "domain"], packages: ["preact", "@preact/signals"] },
  db: { layers: ["db", "domain"], packages: ["postgres"] },
  adapters: { layers: ["adapters", "domain"], packages: ["*"] },
  services: { layers: ["services", "db", "adapters", "domain"], packages: ["*"] },
  api: { layers: ["api", "services", "db", "adapters", "domain"], packages: ["*"] },
  routes: {
    layers: ["routes", "islands", "components", "client", "services", "adapters", "domain"],
    packages: ["*"],
  },
  islands: {
    layers: ["islands", "components", "client", "domain"],
    packages: ["preact", "@preact/signals"],
  },
  components: {
    layers: ["components", "islands", "client", "domain"],
    packages: ["preact", "@preact/signals"],
  },
  wiring: {
    layers: ["wiring", "api", "routes", "services", "db", "adapters", "domain"],
    packages: ["*"],
  },
  // The operator scripts share a helper (scripts/_queue_task.ts).
  entry: {
    layers: ["entry", "wiring", "api", "routes", "services", "db", "adapters", "domain"],
    packages: ["*"],
  },
};

/** The layer of a repo-relative path, or null for what the table leaves out. */
function layerOf(path: string): string | null {
  for (const [prefix, layer] of LAYERS) if (path.startsWith(prefix)) return layer;
  return null;
}

/** One import: a module of ours and what it imports (a repo path, or `pkg:<name>`). */
interface Edge {
  from: string;
  to: string;
}

/** The package an npm, node or vendored specifier names, or null for a module of ours. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith("node:")) return specifier;
  if (specifier.startsWith("npm:")) {
    const bare = specifier.slice(4).replace(/^\//, "");
    const parts = bare.split("/");
    const name = bare.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
    return name.replace(/(.)@.*$/, "$1");
  }
  if (specifier.startsWith("file:")) {
    const path = fromFileUrl(specifier).slice(ROOT.length);
    const vendored = /^vendor\/([^/]+)\//.exec(path);
    return vendored ? vendored[1] : null;
  }
  return specifier;
}

/** What breaks the table, one line per import. */
function violations(edges: Edge[]): string[] {
  const out: string[] = [];
  for (const { from, to } of edges) {
    const layer = layerOf(from);
    if (!layer) continue;
    const rule = RULES[layer];
    if (to.startsWith("pkg:")) {
      const name = to.slice(4);
      if (!rule.packages.includes("*") && !rule.packages.includes(name)) {
        out.push(`${from} (${layer}) imports the package ${name}`);
      }
      continue;
    }
    const target = layerOf(to);
    if (!target) out.push(`${from} (${layer}) imports ${to}, which is in no layer`);
    else if (!rule.layers.includes(target)) {
      out.push(`${from} (${layer}) imports ${to} (${target})`);
    }
  }
  return out;
}

/** Our modules: every .ts/.tsx outside tests, benchmarks, vendored code and build output. */
function sourceFiles(): string[] {
  const files: string[] = [];
  const skip = /^(tests|bench|vendor|node_modules|_build|data|docs|migrations|static)$|^\./;
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(`${ROOT}${rel}`)) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (!rel && skip.test(e.name)) continue;
      if (e.isDirectory) walk(path);
      else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) files.push(path);
    }
  };
  walk("");
  return files.sort();
}

interface InfoJson {
  modules: {
    specifier: string;
    dependencies?: {
      specifier: string;
      code?: { specifier: string };
      type?: { specifier: string };
    }[];
  }[];
}

/** Every import of every module of ours, resolved by `deno info` (import map included). */
async function moduleGraph(files: string[]): Promise<Edge[]> {
  const dir = await Deno.makeTempDir();
  try {
    const entry = `${dir}/all.ts`;
    await Deno.writeTextFile(
      entry,
      files.map((f) => `import ${JSON.stringify(new URL(f, `file://${ROOT}`).href)};\n`).join(""),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", `${ROOT}deno.json`, entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as InfoJson;
    const edges: Edge[] = [];
    for (const m of info.modules) {
      if (!m.specifier.startsWith(`file://${ROOT}`)) continue;
      const from = fromFileUrl(m.specifier).slice(ROOT.length);
      for (const d of m.dependencies ?? []) {
        for (const resolved of [d.code?.specifier, d.type?.specifier]) {
          if (!resolved) continue;
          const pkg = packageOf(resolved);
          edges.push({ from, to: pkg ? `pkg:${pkg}` : fromFileUrl(resolved).slice(ROOT.length) });
        }
      }
    }
    return edges;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const files = sourceFiles();
const graph = moduleGraph(files);

Deno.test("every module outside tests/ and bench/ is in a layer of the table", () => {
  assert.deepEqual(files.filter((f) => !layerOf(f)), []);
  assert.ok(files.includes("db/images.ts") && files.includes("domain/tag_names.ts"), "sanity");
});

Deno.test("every import follows the layering table", async () => {
  const edges = await graph;
  // Sanity: the graph holds imports of each kind the table rules on.
  const has = (from: string, to: string) => edges.some((e) => e.from === from && e.to === to);
  assert.ok(has("db/images.ts", "domain/tag_names.ts"), "a relative import");
  assert.ok(has("db/client.ts", "pkg:postgres"), "the vendored driver, through the import map");
  assert.ok(has("client/api_client.ts", "pkg:@preact/signals"), "an npm package");
  assert.deepEqual(violations(edges), []);
});

Deno.test("no two folders import each other", async () => {
  const folder = (p: string) => p.includes("/") ? p.slice(0, p.indexOf("/")) : "(top)";
  const pairs = new Set<string>();
  for (const { from, to } of await graph) {
    if (to.startsWith("pkg:") || folder(from) === folder(to)) continue;
    pairs.add(`${folder(from)} -> ${folder(to)}`);
  }
  const mutual = [...pairs].filter((p) => {
    const [a, b] = p.split(" -> ");
    return a < b && pairs.has(`${b} -> ${a}`);
  });
  assert.deepEqual(mutual, []);
});

Deno.test("violations() names an import against the table, and lets allowed ones pass", () => {
  assert.deepEqual(
    violations([
      { from: "db/images.ts", to: "adapters/config.ts" },
      { from: "db/images.ts", to: "pkg:zod" },
      { from: "islands/Library.tsx", to: "db/client.ts" },
      { from: "domain/types.ts", to: "services/deps.ts" },
      { from: "routes/_pages.ts", to: "db/client.ts" },
      { from: "services/deleter.ts", to: "api/errors.ts" },
      { from: "client/ui.ts", to: "pkg:node:crypto" },
      { from: "adapters/log.ts", to: "lib/old.ts" },
      { from: "db/images.ts", to: "domain/tag_names.ts" },
      { from: "api/tags.ts", to: "db/tags.ts" },
      { from: "wiring/app.ts", to: "routes/_pages.ts" },
      { from: "tests/x_test.ts", to: "db/client.ts" },
    ]),
    [
      "db/images.ts (db) imports adapters/config.ts (adapters)",
      "db/images.ts (db) imports the package zod",
      "islands/Library.tsx (islands) imports db/client.ts (db)",
      "domain/types.ts (domain) imports services/deps.ts (services)",
      "routes/_pages.ts (routes) imports db/client.ts (db)",
      "services/deleter.ts (services) imports api/errors.ts (api)",
      "client/ui.ts (client) imports the package node:crypto",
      "adapters/log.ts (adapters) imports lib/old.ts, which is in no layer",
    ],
  );
});
