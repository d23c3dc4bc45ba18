// The broken twin of github_app.js: the same GitHub App refusing bodies over 2.5 MB with 400, as a
// Django view does under the default DATA_UPLOAD_MAX_MEMORY_SIZE (2621440 bytes). GitHub delivers
// payloads up to 25 MB and never retries (docs.github.com "Webhook events and payloads"), so a push
// of many commits is lost for good: oversized-payload's `valid_not_rejected` and `lost`.
//
// Usage: node github_app_body_limit.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_body_limit", { maxBody: 2621440, tooLarge: 400 });
