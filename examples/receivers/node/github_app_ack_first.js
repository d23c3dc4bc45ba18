// The broken twin of github_app.js: the same GitHub App answering 200 as soon as the
// signature is checked, then applying the delivery 200 ms later from memory (a queue in the
// process). GitHub saw the 2xx and never sends it again (nor does a team redelivering its
// failed deliveries by hand), so a crash in between loses the effect: `lost` under
// `certify --chaos`'s crash-after-ack.
//
// Usage: node github_app_ack_first.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_ack_first", { applyAfterMs: 200 });
