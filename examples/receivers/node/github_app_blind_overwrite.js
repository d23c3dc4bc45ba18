// A broken twin of github_app.js: the same GitHub App that overwrites each issue's and
// pull request's state with whatever delivery comes last, without comparing updated_at.
// Deliveries out of order (a reopened after a closed, a redelivered old one) move an
// object back: `stale`.
//
// Usage: node github_app_blind_overwrite.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { createServer } from "node:http";
import { createApp, openDatabase } from "./github_app.js";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error("github_app_blind_overwrite: set WEBHOOK_SECRET to the App's webhook secret");
  process.exit(2);
}
const port = Number(process.env.PORT || 3000);
const db = openDatabase(process.env.DATABASE || "github_app.db");
const server = createServer(createApp({ secret, db, ordered: false }));
server.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${port}/webhooks`);
});
const stop = () => server.close(() => { db.close(); process.exit(0); });
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
