#!/usr/bin/env bash
# Installs the real agent CLIs the agent-hook end-to-end tests drive (test/agents:
# Claude Code, Codex, Gemini CLI, OpenCode, Kilo Code, Copilot CLI, Qwen Code,
# Factory Droid, Auggie and Cline, ~2 GB with native binaries) at the versions
# test/agents/package-lock.json pins, and strace for the no-outbound-connection
# test. Idempotent: does nothing when both are already there.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=test/agents

# Every package of the lockfile that is on disk must be at its locked version,
# and the ten entry points the tests run must exist (test/helpers/agentClis.ts
# checks the same before running anything).
installed() {
  node -e '
    const fs = require("node:fs");
    const path = require("node:path");
    const dir = process.argv[1];
    const lock = JSON.parse(fs.readFileSync(path.join(dir, "package-lock.json"), "utf8"));
    let ok = true;
    for (const [key, entry] of Object.entries(lock.packages)) {
      if (key === "") continue;
      const file = path.join(dir, key, "package.json");
      if (!fs.existsSync(file)) {
        if (!entry.optional) { console.error(`missing: ${key}`); ok = false; }
        continue;
      }
      const version = JSON.parse(fs.readFileSync(file, "utf8")).version;
      if (version !== entry.version) { console.error(`${key}: ${version}, locked ${entry.version}`); ok = false; }
    }
    for (const entry of [
      "node_modules/@anthropic-ai/claude-code-linux-x64/claude",
      "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
      "node_modules/@google/gemini-cli/bundle/gemini.js",
      "node_modules/opencode-linux-x64/bin/opencode",
      "node_modules/@kilocode/cli-linux-x64/bin/kilo",
      "node_modules/@github/copilot-linux-x64/copilot",
      "node_modules/@qwen-code/qwen-code/cli.js",
      "node_modules/@factory/cli-linux-x64/bin/droid",
      "node_modules/@augmentcode/auggie/augment.mjs",
      "node_modules/@cline/cli-linux-x64/bin/cline",
    ]) if (!fs.existsSync(path.join(dir, entry))) { console.error(`missing: ${entry}`); ok = false; }
    process.exit(ok ? 0 : 1);
  ' "$dir" 2>/dev/null
}

if installed; then
  echo "agent CLIs already installed in $dir at the locked versions"
else
  # --ignore-scripts: no install-time downloads outside the registry (keytar
  # fetches prebuilt binaries from GitHub) and no native builds. The tests run
  # Claude Code's and Factory Droid's binaries from their platform packages,
  # which need no postinstall (@factory/cli's would hard-link the binary over
  # its shim, or fetch it itself when the platform package is missing; that
  # package is pinned beside it, at 0.225.2, since its 0.225.1 is not on the
  # registry). Auggie is one JS bundle; its optional node-pty is not built and
  # not needed for `auggie -p`. Cline's binary is run from its platform package
  # too (its postinstall would only hard-link it beside the resolver shim).
  # `npm install --no-save` rather than `npm ci`: some of these CLIs list
  # platform packages that the registry does not carry (OpenCode's and Kilo's
  # macOS and Windows builds), so the lockfile cannot name them and `npm ci`
  # refuses it as out of sync. The lockfile is still what is installed, and
  # `installed` checks every package of it against its locked version after.
  npm install --prefix "$dir" --ignore-scripts --no-save --no-audit --no-fund
  if ! installed; then
    echo "agent CLIs in $dir are still not at the locked versions after npm ci (linux x64 only)" >&2
    exit 1
  fi
fi

if ! command -v strace >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y strace
  else
    echo "strace is missing: the agent tests that check for outbound connections will be skipped, and fail under CI=true (apt-get install strace)" >&2
  fi
fi
