// A broken twin of github_app.js: the same GitHub App that stores each installation event's
// state as it arrives (last write wins), without comparing the installation's updated_at.
// An older installation event delivered after a newer one moves the installation back: a
// late installation.created makes a deleted installation active again (`stale`, `regressed`).
//
// Usage: node github_app_installation_overwrite.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_installation_overwrite", { installations: "arrival" });
