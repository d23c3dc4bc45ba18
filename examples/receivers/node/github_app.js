// A GitHub App's webhook receiver, written from GitHub's docs and @octokit/webhooks' README.
//
// Correct strategy: verify with the official verifier (`webhooks.verifyAndReceive`, which
// checks X-Hub-Signature-256 over the raw body), then, in ONE SQLite transaction, claim
// the delivery (X-GitHub-Delivery, GitHub's id of the event, kept on redelivery) and apply
// its effect. A redelivered or concurrent copy finds the claim and does nothing; a crash
// before the commit leaves neither claim nor effect, so a redelivery applies it.
//
// Effects (one row per effect in `effects`, keyed by business_key):
//   issues.opened              comment:{full_name}#{number}          (a welcome comment)
//   issue_comment.created      reply:{full_name}#{number}:{comment}   (a bot reply)
//   push                       ci:{full_name}@{after}                 (a CI run per head)
//   pull_request.opened|synchronize  ci:{full_name}@{head.sha}
//   installation.created       install:{installation.id}
// State (`states`): every issue and pull request (kind `issue` or `pull_request`), as
// {full_name}#{number}: open, closed or merged,
// kept only when the payload's updated_at is newer than the stored one, so
// out-of-order deliveries never move an object back.
//
// Usage: node github_app.js
//   WEBHOOK_SECRET  the App's webhook secret (required)
//   PORT            port on 127.0.0.1 (default 3000); DATABASE  SQLite file (default github_app.db)
//   POST /webhooks  the webhook; GET /healthz  readiness.
// Broken twins: github_app_no_dedupe.js (no claim), github_app_blind_overwrite.js (no
// updated_at guard: the last delivery wins, even an older one), github_app_by_number.js
// (claims the event, its action and the issue's or pull request's number, not the delivery),
// github_app_body_limit.js (refuses bodies over Django's default 2.5 MB with 400: a large push lost).

import { createServer } from "node:http";
import { Webhooks } from "@octokit/webhooks";
import Database from "better-sqlite3";

const MAX_BODY_BYTES = 25 * 1024 * 1024; // GitHub sends no payload over 25 MB

export function openDatabase(path) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.exec(`
    CREATE TABLE IF NOT EXISTS deliveries (delivery_id TEXT PRIMARY KEY, event TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS effects (id INTEGER PRIMARY KEY, business_key TEXT NOT NULL, delivery_id TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS states (object_id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
                                       updated_at TEXT NOT NULL);
  `);
  return db;
}

// The claim's key: the delivery's GUID (X-GitHub-Delivery), GitHub's id of the event.
const byDelivery = (id) => id;

export function createApp({ secret, db, dedupe = true, ordered = true, claimKey = byDelivery,
                            maxBody = MAX_BODY_BYTES, tooLarge = 413 }) {
  const webhooks = new Webhooks({ secret });
  const claim = db.prepare("INSERT INTO deliveries (delivery_id, event) VALUES (?, ?) ON CONFLICT DO NOTHING");
  const addEffect = db.prepare("INSERT INTO effects (business_key, delivery_id) VALUES (?, ?)");
  const setState = db.prepare(`
    INSERT INTO states (object_id, kind, status, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
    ${ordered ? "WHERE excluded.updated_at > states.updated_at" : ""}`);

  // One transaction per delivery: the claim and every write of its handler commit together.
  const apply = db.transaction((id, name, writes, payload) => {
    if (dedupe && claim.run(claimKey(id, name, payload), name).changes === 0) return; // already applied
    for (const [kind, ...args] of writes) {
      if (kind === "effect") addEffect.run(args[0], id);
      else setState.run(...args);
    }
  });

  const repo = (payload) => payload.repository.full_name;
  const ref = (payload, number) => `${repo(payload)}#${number}`;
  const issueState = (payload) =>
    ["state", ref(payload, payload.issue.number), "issue", payload.issue.state, payload.issue.updated_at];
  const prState = (payload) => ["state", ref(payload, payload.number), "pull_request",
    payload.pull_request.merged ? "merged" : payload.pull_request.state, payload.pull_request.updated_at];

  webhooks.on("issues.opened", ({ id, name, payload }) => apply(id, name, [
    ["effect", `comment:${repo(payload)}#${payload.issue.number}`], issueState(payload)], payload));
  webhooks.on(["issues.edited", "issues.labeled", "issues.closed", "issues.reopened"],
    ({ id, name, payload }) => apply(id, name, [issueState(payload)], payload));
  webhooks.on("issue_comment.created", ({ id, name, payload }) => apply(id, name, [
    ["effect", `reply:${repo(payload)}#${payload.issue.number}:${payload.comment.id}`], issueState(payload)], payload));
  webhooks.on("push", ({ id, name, payload }) => apply(id, name, [["effect", `ci:${repo(payload)}@${payload.after}`]], payload));
  webhooks.on(["pull_request.opened", "pull_request.synchronize"], ({ id, name, payload }) => apply(id, name, [
    ["effect", `ci:${repo(payload)}@${payload.pull_request.head.sha}`], prState(payload)], payload));
  webhooks.on(["pull_request.closed", "pull_request.reopened"],
    ({ id, name, payload }) => apply(id, name, [prState(payload)], payload));
  webhooks.on("installation.created", ({ id, name, payload }) => apply(id, name, [
    ["effect", `install:${payload.installation.id}`]], payload));

  return async function handle(req, res) {
    const send = (status, body) => { res.writeHead(status, { "content-type": "text/plain" }); res.end(body); };
    if (req.method === "GET" && req.url === "/healthz") return send(200, "ok\n");
    if (req.method !== "POST" || req.url.split("?")[0] !== "/webhooks") return send(404, "not found\n");
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
      size += chunk.length;
      if (size > maxBody) return send(tooLarge, "payload too large\n");
      chunks.push(chunk);
    }
    const id = req.headers["x-github-delivery"];
    const name = req.headers["x-github-event"];
    const signature = req.headers["x-hub-signature-256"];
    if (!id || !name || !signature) return send(400, "missing GitHub headers\n");
    try {
      await webhooks.verifyAndReceive({ id, name, payload: Buffer.concat(chunks).toString("utf8"), signature });
      return send(200, "ok\n");
    } catch (error) {
      const first = error.errors ? Array.from(error.errors)[0] : error;
      const status = first && first.status ? first.status : 500;
      return send(status, status === 400 ? "invalid signature or body\n" : "error\n");
    }
  };
}

// Serves createApp(options) on 127.0.0.1:$PORT with $WEBHOOK_SECRET and $DATABASE until
// SIGTERM or SIGINT; `name` is the program's, for its messages (github_app.js and its twins).
export function serve(name, options = {}) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error(`${name}: set WEBHOOK_SECRET to the App's webhook secret`);
    process.exit(2);
  }
  const port = Number(process.env.PORT || 3000);
  const db = openDatabase(process.env.DATABASE || "github_app.db");
  const server = createServer(createApp({ secret, db, ...options }));
  server.listen(port, "127.0.0.1", () => {
    console.log(`listening on http://127.0.0.1:${port}/webhooks`);
  });
  const stop = () => server.close(() => { db.close(); process.exit(0); });
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve("github_app");
}
