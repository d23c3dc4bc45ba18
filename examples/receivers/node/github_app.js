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
//   push                       ci:{full_name}@{after}                 (a CI run per head; none
//                              for a deleted branch or a push of no new commit, e.g. a tag)
//   pull_request.opened|synchronize  ci:{full_name}@{head.sha}
//   (none of those with CI_ON=check_suite: an App on the checks API runs its CI per requested
//   check suite, GitHub's "Using the REST API to interact with checks")
//   installation.created       install:{installation.id}
// Counts (`comment_counts`): each issue's comments, {full_name}#{number}: one up per
// issue_comment.created, one down per issue_comment.deleted, in the delivery's transaction
// (a redelivered deletion finds the claim and counts nothing).
// State (`states`): every issue and pull request (kind `issue` or `pull_request`), as
// {full_name}#{number}: open, closed or merged, as GitHub's REST API serves it when the
// event arrives (GET /repos/{owner}/{repo}/issues/{number}, /pulls/{number}), fetched and
// stored under a per-object lock (one fetch-and-write at a time per issue, so a later
// fetch's answer is the one kept). The payload's updated_at cannot order them: it counts
// whole seconds, a bot labels and closes an issue in one second, and GitHub sends no event
// time to break the tie. When the API fails, the delivery is answered 503 before anything
// is claimed, so a redelivery applies it.
// Installations (kind `installation`, keyed by the installation id): active, suspended or
// deleted, from installation.created, .suspend, .unsuspend and .deleted, in the delivery's
// transaction; a state is written only over an older one (the payload installation's
// updated_at, Unix seconds, which each of those changes moves), and a deleted installation
// stays deleted, so an older event delivered late never brings an installation back. A ping
// is answered and ignored: its body names the App's webhook (`hook`), no installation.
// Checks (sent to an App subscribed to check_suite and check_run): one CI job per requested
// check suite, suite:{full_name}@{head_sha}:{suite id}, one per re-run of the whole suite,
// rerun:{full_name}@{head_sha}:{suite id}:{suite updated_at} (each re-request moves it), one per
// re-run check run, rerun-run:{full_name}@{head_sha}:{run id}, and the action a user asked of a
// check run, action:{full_name}@{head_sha}:{run id}:{identifier}:{X-GitHub-Delivery} (each click of
// a button is a request of its own: two clicks, two deliveries, two actions), each in the delivery's
// transaction. A check suite is requested for every push to any branch, a pull request's head too. Each check run's status (kind `check_run`, keyed by its id: queued, in_progress or
// completed) is written only over an older one: ordered by the run's completed_at, else its
// started_at (GitHub's ISO times), then by the status's rank (queued < in_progress < completed:
// GitHub never moves a run back, a re-run is a new run), so an older delivery arriving late
// never moves a run back.
//
// Usage: node github_app.js
//   WEBHOOK_SECRET  the App's webhook secret (required)
//   PORT            port on 127.0.0.1 (default 3000); DATABASE  SQLite file (default github_app.db)
//   CI_ON           "push" (default) or "check_suite" (subscribed to the checks: CI per requested suite)
//   HOOKPROOF_API_BASE or GITHUB_API_URL  the REST API's base (default https://api.github.com;
//                   hookproof sets HOOKPROOF_API_BASE), HOOKPROOF_API_KEY or GITHUB_TOKEN its token
//   POST /webhooks  the webhook; GET /healthz  readiness.
// Broken twins: github_app_no_dedupe.js (no claim), github_app_blind_overwrite.js (stores the
// payload's state, the last delivery wins, even an older one), github_app_updated_at.js (stores
// the payload's state when its updated_at is not older than the stored one: a same-second tie
// goes to whichever arrives last), github_app_keep_first.js (the same with `>`: a tie goes to
// whichever arrives first), github_app_by_number.js (claims the event, its action and
// the issue's or pull request's number, not the delivery), github_app_ack_first.js (answers 200
// once the signature is checked and applies the delivery afterwards, from memory: killed in
// between, the acknowledged work is gone), github_app_delete_every_delivery.js (takes a deleted
// comment off its issue's count on every delivery of the deletion), github_app_body_limit.js (refuses bodies over Django's
// default 2.5 MB with 400: a large push lost), github_app_installation_overwrite.js (stores each
// installation event's state as it arrives: a late installation.created reactivates a deleted one),
// github_app_check_suite_every_delivery.js (starts a requested check suite's CI job before the
// claim: a redelivered check_suite.requested starts a second job), github_app_check_run_overwrite.js
// (stores each check run's status as it arrives: a late check_run.created moves a completed run back),
// github_app_rerun_once.js (a suite's re-run keyed by the suite's id, a check run's by its name: a
// second "Re-run" of either is dropped), github_app_suite_by_branch.js (a requested suite's job keyed
// by its branch: a pull request's second head, or the default branch's, starts none),
// github_app_action_once.js (an action keyed by the run and the button: a second click does nothing).

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
    CREATE TABLE IF NOT EXISTS comment_counts (object_id TEXT PRIMARY KEY, comments INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS reruns_seen (rerun TEXT PRIMARY KEY);
  `);
  return db;
}

// The claim's key: the delivery's GUID (X-GitHub-Delivery), GitHub's id of the event.
const byDelivery = (id) => id;

// The REST API the App reads issues and pull requests from, and its token.
export const defaultApi = () => ({
  base: (process.env.HOOKPROOF_API_BASE || process.env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, ""),
  token: process.env.HOOKPROOF_API_KEY || process.env.GITHUB_TOKEN || "",
});

// `order`: how a state is kept. "fetch" (this App): the REST API's, fetched under a per-object
// lock; "payload" (a twin): the payload's, written when its updated_at is not older than the
// stored one ("payload-strict": newer); "none" (a twin): the payload's, whatever the stored one;
// "fetch-unlocked" (a twin): the REST API's, fetched with no lock and written when its updated_at is
// not older than the stored one (two answers of one second: the later written wins, older or not).
// `countDeletes`: "claimed" (this App) takes a deleted comment off its issue's count in the
// delivery's transaction, once; "every-delivery" (a twin) takes it off before the claim, on
// every delivery of the deletion (a redelivery counts it again). `installations`: "newest" (this
// App) writes an installation's state over an older one only, never over deleted; "arrival" (a
// twin) writes each as it arrives. `suiteJobs`: "claimed" (this App) starts a requested check suite's
// job in the delivery's transaction, once; "every-delivery" (a twin) before the claim, on every
// delivery. `checkRuns`: "newest" (this App) writes a check run's status over an older one only;
// "arrival" (a twin) writes each as it arrives. `ciOn` ($CI_ON): "push" (an App not on the checks
// API) starts a CI job per pushed head; "check_suite" (an App subscribed to check_suite and
// check_run) per requested check suite only, a push or pull request starting none. `reruns`:
// "each" (this App) starts a job per re-run delivery; "once" (a twin) keys a suite's re-run by the
// suite's id and a check run's by its suite and name, so a second "Re-run" of either starts none.
// `suites`: "each" (this App) starts a job per requested suite; "by-branch" (a twin) one per branch
// (its head_branch), so a later head of one branch starts none. `actions`: "each" (this App)
// performs an action per click (delivery); "once" (a twin) one per run and button.
export function createApp({ secret, db, dedupe = true, order = "fetch", claimKey = byDelivery, api = defaultApi(),
                           applyAfterMs = null, maxBody = MAX_BODY_BYTES, tooLarge = 413, countDeletes = "claimed",
                           installations = "newest", suiteJobs = "claimed", checkRuns = "newest",
                           ciOn = process.env.CI_ON || "push", reruns = "each",
                           suites = "each", actions = "each" }) {
  const webhooks = new Webhooks({ secret });
  const seen = db.prepare("INSERT INTO reruns_seen (rerun) VALUES (?) ON CONFLICT DO NOTHING");
  const claim = db.prepare("INSERT INTO deliveries (delivery_id, event) VALUES (?, ?) ON CONFLICT DO NOTHING");
  const addEffect = db.prepare("INSERT INTO effects (business_key, delivery_id) VALUES (?, ?)");
  const setState = db.prepare(`
    INSERT INTO states (object_id, kind, status, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
    ${{ payload: "WHERE excluded.updated_at >= states.updated_at",
        "payload-strict": "WHERE excluded.updated_at > states.updated_at",
        "fetch-unlocked": "WHERE excluded.updated_at >= states.updated_at" }[order] || ""}`);
  const setInstallation = db.prepare(`
    INSERT INTO states (object_id, kind, status, updated_at) VALUES (?, 'installation', ?, ?)
    ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
    ${installations === "arrival" ? "" : "WHERE states.status <> 'deleted' AND excluded.updated_at > states.updated_at"}`);
  const setCheckRun = db.prepare(`
    INSERT INTO states (object_id, kind, status, updated_at) VALUES (?, 'check_run', ?, ?)
    ON CONFLICT (object_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at
    ${checkRuns === "arrival" ? "" : "WHERE excluded.updated_at > states.updated_at"}`);
  const count = db.prepare(`
    INSERT INTO comment_counts (object_id, comments) VALUES (?, ?)
    ON CONFLICT (object_id) DO UPDATE SET comments = comments + excluded.comments`);
  const locks = new Map(); // object id -> the tail of its fetch-and-write chain

  // One transaction per delivery: the claim and every write of its handler commit together.
  const apply = db.transaction((id, name, writes, payload) => {
    if (countDeletes === "every-delivery") { // the twin: counted before (and whatever) the claim says
      for (const [kind, ...args] of writes) if (kind === "count" && args[1] < 0) count.run(...args);
    }
    if (suiteJobs === "every-delivery") { // the twin: the suite's job started before (and whatever) the claim says
      for (const [kind, ...args] of writes) if (kind === "job") addEffect.run(args[0], id);
    }
    if (dedupe && claim.run(claimKey(id, name, payload), name).changes === 0) return; // already applied
    for (const [kind, ...args] of writes) {
      if (kind === "effect") addEffect.run(args[0], id);
      else if (kind === "count") { if (countDeletes !== "every-delivery" || args[1] > 0) count.run(...args); }
      else if (kind === "installation") setInstallation.run(...args);
      else if (kind === "job") {
        if (suiteJobs !== "every-delivery" && (suites !== "by-branch" || seen.run(args[1]).changes > 0)) {
          addEffect.run(args[0], id);
        }
      }
      else if (kind === "action") { if (actions !== "once" || seen.run(args[1]).changes > 0) addEffect.run(args[0], id); }
      else if (kind === "rerun") { if (reruns !== "once" || seen.run(args[1]).changes > 0) addEffect.run(args[0], id); }
      else if (kind === "check_run") setCheckRun.run(...args);
      else setState.run(...args);
    }
  });

  const repo = (payload) => payload.repository.full_name;
  const ref = (payload, number) => `${repo(payload)}#${number}`;
  const statusOf = (kind, obj) => (kind === "pull_request" && obj.merged ? "merged" : obj.state);

  // GET the issue or pull request as GitHub has it now: {status, updated_at}; a failure
  // throws with status 503 (nothing is claimed: a redelivery applies the event).
  async function fetchState(payload, kind, number) {
    const url = `${api.base}/repos/${repo(payload)}/${kind === "issue" ? "issues" : "pulls"}/${number}`;
    const answer = await fetch(url, { headers: { accept: "application/vnd.github+json",
      authorization: `Bearer ${api.token}`, "x-github-api-version": "2022-11-28" } });
    if (!answer.ok) throw Object.assign(new Error(`GET ${url}: ${answer.status}`), { status: 503 });
    const obj = await answer.json();
    return { status: statusOf(kind, obj), updated_at: obj.updated_at };
  }

  // One fetch-and-write at a time per object (in this process; several processes would
  // lock the row, SELECT ... FOR UPDATE): the write of a later fetch lands last.
  function withLock(key, fn) {
    const run = (locks.get(key) || Promise.resolve()).then(fn);
    const tail = run.catch(() => {});
    locks.set(key, tail);
    tail.then(() => { if (locks.get(key) === tail) locks.delete(key); });
    return run;
  }

  // Apply `effects` and the state of issue or pull request `number` (`obj` as the payload has it).
  const handle = ({ id, name, payload }, effects, kind, number, obj) => {
    const key = ref(payload, number);
    if (order === "fetch-unlocked") {
      return fetchState(payload, kind, number).then((now) =>
        apply(id, name, [...effects, ["state", key, kind, now.status, now.updated_at]], payload));
    }
    if (order !== "fetch") {
      return apply(id, name, [...effects, ["state", key, kind, statusOf(kind, obj), obj.updated_at]], payload);
    }
    return withLock(key, async () => {
      const now = await fetchState(payload, kind, number);
      apply(id, name, [...effects, ["state", key, kind, now.status, now.updated_at]], payload);
    });
  };
  const onIssue = (event, effects = []) => handle(event, effects, "issue", event.payload.issue.number,
    event.payload.issue);
  const onPull = (event, effects = []) => handle(event, effects, "pull_request", event.payload.number,
    event.payload.pull_request);

  webhooks.on("issues.opened", (event) => onIssue(event,
    [["effect", `comment:${repo(event.payload)}#${event.payload.issue.number}`]]));
  webhooks.on(["issues.edited", "issues.labeled", "issues.unlabeled", "issues.closed", "issues.reopened"],
    (event) => onIssue(event));
  const comments = (payload, by) => ["count", ref(payload, payload.issue.number), by];
  webhooks.on("issue_comment.created", (event) => onIssue(event, [["effect",
    `reply:${repo(event.payload)}#${event.payload.issue.number}:${event.payload.comment.id}`],
    comments(event.payload, 1)]));
  webhooks.on("issue_comment.edited", (event) => onIssue(event));
  webhooks.on("issue_comment.deleted", (event) => onIssue(event, [comments(event.payload, -1)]));
  // A CI run per pushed head: none for a deleted branch (`after` is all zeros) or a push of
  // no new commit (a tag, or a branch created on a commit pushed before).
  // An App on the checks API (`ciOn` "check_suite") runs its CI per requested check suite instead.
  const perPush = ciOn !== "check_suite";
  webhooks.on("push", ({ id, name, payload }) => apply(id, name, !perPush || payload.deleted
    || payload.commits.length === 0 ? [] : [["effect", `ci:${repo(payload)}@${payload.after}`]], payload));
  webhooks.on(["pull_request.opened", "pull_request.synchronize"], (event) => onPull(event, perPush
    ? [["effect", `ci:${repo(event.payload)}@${event.payload.pull_request.head.sha}`]] : []));
  webhooks.on(["pull_request.edited", "pull_request.closed", "pull_request.reopened"], (event) => onPull(event));
  // An installation's state and when it last changed (its updated_at: Unix seconds, or an ISO
  // time, as GitHub's installation object allows either), as ISO text, which orders as time does.
  const installationState = (payload, status) => {
    const at = payload.installation.updated_at;
    const when = new Date(typeof at === "number" ? at * 1000 : Date.parse(at)).toISOString();
    return ["installation", String(payload.installation.id), status, when];
  };
  webhooks.on("installation.created", ({ id, name, payload }) => apply(id, name, [
    ["effect", `install:${payload.installation.id}`], installationState(payload, "active")], payload));
  for (const [action, status] of [["suspend", "suspended"], ["unsuspend", "active"], ["deleted", "deleted"]]) {
    webhooks.on(`installation.${action}`, ({ id, name, payload }) => apply(id, name,
      [installationState(payload, status)], payload));
  }

  // Checks: a CI job per requested suite and per re-run, each check run's status over older ones.
  const head = (payload, obj) => `${repo(payload)}@${obj.head_sha}`;
  const RANK = { queued: 0, in_progress: 1, completed: 2 };
  const checkRun = (payload) => {
    const run = payload.check_run;
    return ["check_run", String(run.id), run.status, `${run.completed_at || run.started_at}|${RANK[run.status] ?? 0}`];
  };
  webhooks.on("check_suite.requested", ({ id, name, payload }) => apply(id, name, [
    ["job", `suite:${head(payload, payload.check_suite)}:${payload.check_suite.id}`,
      `branch:${repo(payload)}:${payload.check_suite.head_branch}`]], payload));
  webhooks.on("check_suite.rerequested", ({ id, name, payload }) => apply(id, name, [["rerun",
    `rerun:${head(payload, payload.check_suite)}:${payload.check_suite.id}:${payload.check_suite.updated_at}`,
    `suite:${payload.check_suite.id}`]], payload));
  webhooks.on(["check_run.created", "check_run.completed"], ({ id, name, payload }) => apply(id, name,
    [checkRun(payload)], payload));
  webhooks.on("check_run.rerequested", ({ id, name, payload }) => apply(id, name, [checkRun(payload),
    ["rerun", `rerun-run:${head(payload, payload.check_run)}:${payload.check_run.id}`,
      `run:${payload.check_run.check_suite.id}:${payload.check_run.name}`]], payload));
  webhooks.on("check_run.requested_action", ({ id, name, payload }) => apply(id, name, [checkRun(payload),
    ["action", `action:${head(payload, payload.check_run)}:${payload.check_run.id}:`
      + `${payload.requested_action.identifier}:${id}`,
      `click:${payload.check_run.id}:${payload.requested_action.identifier}`]], payload));

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
    const payload = Buffer.concat(chunks).toString("utf8");
    if (applyAfterMs !== null) { // the twin answering first: verified, acknowledged, applied later in memory
      if (!(await webhooks.verify(payload, signature).catch(() => false))) return send(400, "invalid signature\n");
      send(200, "ok\n");
      setTimeout(() => webhooks.receive({ id, name, payload: JSON.parse(payload) }).catch(() => {}), applyAfterMs);
      return;
    }
    try {
      await webhooks.verifyAndReceive({ id, name, payload, signature });
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
