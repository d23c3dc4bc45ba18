// A broken twin of github_app.js: the same GitHub App that claims each delivery by the
// event, its action and the issue's or pull request's number (repository included)
// instead of the delivery's GUID (X-GitHub-Delivery). Redeliveries and concurrent copies
// are caught, but GitHub sends a new delivery for every change: an issue closed, reopened
// and closed again sends two `issues.closed`, and the second is taken for a copy of the
// first, so the issue stays open (`stale`); a second comment's `issue_comment.created`
// is dropped the same way, its reply never posted (`lost`).
//
// Usage: node github_app_by_number.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { createServer } from "node:http";
import { createApp, openDatabase } from "./github_app.js";

// `issues.closed:{owner}/{repo}#{number}`; events about no issue or pull request by their delivery.
const byNumber = (id, name, payload) => {
  const number = payload.issue?.number ?? payload.number;
  return number === undefined ? id : `${name}.${payload.action}:${payload.repository.full_name}#${number}`;
};

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error("github_app_by_number: set WEBHOOK_SECRET to the App's webhook secret");
  process.exit(2);
}
const port = Number(process.env.PORT || 3000);
const db = openDatabase(process.env.DATABASE || "github_app.db");
const server = createServer(createApp({ secret, db, claimKey: byNumber }));
server.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${port}/webhooks`);
});
const stop = () => server.close(() => { db.close(); process.exit(0); });
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
