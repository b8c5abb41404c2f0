/** The whole `/api/v1` app: the public read side plus sign-in and the write routes. */
import type { Services } from "../services/deps.ts";
import { authRoutes } from "./auth.ts";
import { captionRoutes } from "./captions.ts";
import { chatRoutes } from "./chat.ts";
import { sendRoutes } from "./sends.ts";
import { capBodies } from "./body_limit.ts";
import { imageWriteRoutes } from "./image_writes.ts";
import { createReadApi } from "./read_api.ts";
import { searchByImageRoutes } from "./search_by_image.ts";
import { mergeRoutes } from "./similar.ts";
import { tagRuleWriteRoutes } from "./tag_rule_writes.ts";
import { meRoutes } from "./me.ts";
import { favoriteRoutes } from "./favorites.ts";
import { userRoutes } from "./users.ts";
import { inviteRoutes } from "./invites.ts";
import { auditRoutes } from "./audit.ts";

/** The whole API, without its `/api/v1` prefix, the read model the pages share, the direct links. */
export function createApiApp(services: Services) {
  const { api, read, direct } = createReadApi(services);
  api.use(capBodies); // before every route that takes a body
  api.route("/", authRoutes(services));
  api.route("/", imageWriteRoutes(services, read));
  api.route("/", captionRoutes(services, read));
  api.route("/", mergeRoutes(services, read));
  api.route("/", searchByImageRoutes(services));
  api.route("/", tagRuleWriteRoutes(services));
  api.route("/", meRoutes(services));
  api.route("/", favoriteRoutes(services));
  api.route("/", userRoutes(services));
  api.route("/", inviteRoutes(services));
  api.route("/", auditRoutes(services));
  api.route("/", chatRoutes(services, read));
  api.route("/", sendRoutes(services));
  return { api, read, direct };
}
