/**
 * The public side of `/api/v1`: health, image list and detail, bytes, tags, oEmbed. The edge reader
 * serves exactly this; the full service adds sign-in and the write routes (wiring/app.ts).
 */
import { createReadModel } from "../services/read_model.ts";
import type { Services } from "../services/deps.ts";
import type { ReadModel } from "../domain/types.ts";
import { deliveryRoutes } from "./delivery.ts";
import { onError } from "./errors.ts";
import { healthRoutes } from "./health.ts";
import { imageRoutes } from "./images.ts";
import { oembedRoutes } from "./oembed.ts";
import { newRouter } from "./router.ts";
import { similarRoutes } from "./similar.ts";
import { tagRuleReadRoutes } from "./tag_rules.ts";
import { tagRoutes } from "./tags.ts";

/**
 * The read API, the read model it was built on (the pages share it), and the direct links
 * `/{short_id}.{ext}` (mounted at the root, beside the pages).
 */
export function createReadApi(services: Services, read?: ReadModel) {
  const model = read ??
    createReadModel(
      services.sql,
      services.config.S3_PUBLIC_BASE_URL,
      services.config.LISTING_CACHE_ENTRIES,
      services.searchSql,
    );
  const api = newRouter();
  api.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "oauth2",
    description: "Sign in at POST /api/v1/auth/token; send `Authorization: Bearer <token>`.",
    flows: { password: { tokenUrl: "/api/v1/auth/token", scopes: {} } },
  });
  api.route("/", healthRoutes(services));
  const delivery = deliveryRoutes(services);
  api.route("/", delivery.api);
  api.route("/", imageRoutes(model));
  api.route("/", tagRoutes(model));
  api.route("/", similarRoutes(services));
  api.route("/", tagRuleReadRoutes(services));
  api.route("/", oembedRoutes(services, model));
  api.notFound((c) => c.json({ detail: "Not found" }, 404));
  api.onError(onError);
  return { api, read: model, direct: delivery.direct };
}
