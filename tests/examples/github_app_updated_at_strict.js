// A broken GitHub App for tests/examples/test_github_same_second.py: github_app.js storing the
// payload's issue and pull request state when its updated_at is newer than the stored one (>).
// An issue labeled and closed in one second keeps the label's `open`: the close, of the same
// updated_at, is dropped (`stale`).
//
// Usage (from examples/receivers/node): node ../../../tests/examples/github_app_updated_at_strict.js

import { serve } from "../../examples/receivers/node/github_app.js";

serve("github_app_updated_at_strict", { order: "payload-strict" });
