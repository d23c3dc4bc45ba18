// A broken twin of github_app.js: the same GitHub App, counting each issue's comments, that
// takes a deleted comment off the count before it claims the delivery, so on every delivery
// of an issue_comment.deleted: a redelivery (GitHub's "Redeliver" keeps X-GitHub-Delivery)
// counts the deletion again and the count drops below the comments the issue has (`counter`).
// Its comments' creations are counted once, in the claim's transaction, as github_app.js does.
//
// Usage: node github_app_delete_every_delivery.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_delete_every_delivery", { countDeletes: "every-delivery" });
