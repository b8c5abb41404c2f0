/**
 * The harness's ports: a child service listens on port 0 and the harness reads back the port it
 * got; nginx, which cannot, is started again on another port when its port was taken.
 */
import assert from "node:assert/strict";
import { boundPort, hostEnv, listeningPorts, spawnChild } from "./child.ts";
import { isAddressInUse, startNginx } from "./nginx.ts";

Deno.test("boundPort() reads the port a child bound on port 0 from the kernel", async () => {
  const child = spawnChild({
    args: [
      "eval",
      "--no-config",
      `const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ` +
      `console.log(port) }, () => new Response("here"));`,
    ],
    env: hostEnv(),
  });
  try {
    const port = await boundPort(child);
    // What the child says it bound, and what answers there.
    for (let i = 0; i < 100 && !child.stdout().trim(); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(port, Number(child.stdout().trim()));
    const res = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await res.text(), "here");
    assert.deepEqual(await listeningPorts(child.pid), [port]);
  } finally {
    await child.stop();
  }
  assert.deepEqual(await listeningPorts(child.pid), [], "nothing once it exited");
});

Deno.test("startNginx() starts again on another port when its port was taken before nginx bound it", async () => {
  const tried: number[] = [];
  let thief: Deno.Listener | undefined;
  const nginx = await startNginx((port) => {
    tried.push(port);
    // Another process takes the first port between the check and nginx's start.
    thief ??= Deno.listen({ hostname: "127.0.0.1", port });
    return `server { listen 127.0.0.1:${port}; location / { return 200 "nginx"; } }`;
  }, "/");
  try {
    assert.equal(tried.length, 2, `ports tried: ${tried}`);
    assert.equal(nginx.port, tried[1]);
    assert.notEqual(nginx.port, tried[0]);
    const res = await fetch(`${nginx.base}/`);
    assert.equal(await res.text(), "nginx");
  } finally {
    thief?.close();
    await nginx.stop();
  }
  assert.ok(
    isAddressInUse(new Error("bind() to 127.0.0.1:8080 failed (98: Address already in use)")),
  );
  assert.ok(!isAddressInUse(new Error("nginx: [emerg] unknown directive")));
});
