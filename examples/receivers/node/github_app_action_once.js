// A broken twin of github_app.js: the same GitHub App that performs a check run's requested action
// once per run and button (requested_action.identifier), so a user's second click of the button,
// a new request GitHub sends as its own delivery, is answered 200 and does nothing (`lost` on the
// second click's `action:` key).
//
// Usage: node github_app_action_once.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_action_once", { actions: "once" });
