/** The Hono environment of the service: what every handler can read from the context. */
import type { Principal } from "../domain/accounts.ts";
import type { Logger } from "../adapters/log.ts";

/** Variables set by the service's middleware. */
export interface AppEnv {
  Variables: {
    /** The request's logger: every line carries its request id. */
    log: Logger;
    requestId: string;
    /** The signed-in subject's username, set by guard (api/permissions.ts). */
    user: string;
    /** Who the request acts as, and the API key it came with; set by guard. */
    principal: Principal;
  };
}
