// The broken twin of github_app.js: the same GitHub App without the delivery claim.
// Every delivery applies its effect, so a redelivery (same X-GitHub-Delivery), a
// concurrent copy or a retry after a lost answer applies it again: `duplicated`.
//
// Usage: node github_app_no_dedupe.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_no_dedupe", { dedupe: false });
