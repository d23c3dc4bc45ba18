// A broken twin of github_app.js: the same GitHub App that overwrites each issue's and
// pull request's state with the payload's, whatever delivery comes last, without fetching
// it or comparing updated_at.
// Deliveries out of order (a reopened after a closed, a redelivered old one) move an
// object back: `stale`.
//
// Usage: node github_app_blind_overwrite.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_blind_overwrite", { order: "none" });
