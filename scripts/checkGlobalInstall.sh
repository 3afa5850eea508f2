#!/usr/bin/env bash
# A packed global install, as a user installs assent (issue: shipping as CLIs
# ship): `npm pack`, then `npm i -g` of the tarball into a temp prefix with
# npm's strict install-script policy on, allowing only better-sqlite3's native
# build; then the installed `assent --version`, `assent install claude-code
# --dry-run` with a temp HOME, and a hook allow through the installed hook entry,
# with the daemon auto-spawned from the global install. Leaves nothing behind.
#
# Packages come from npm's cache (--prefer-offline): `npm ci` cached every
# tarball, but npm fetches the package documents it lacks from the registry,
# since a tarball's own lock (npm-shrinkwrap.json) is honoured only for
# packages from a registry.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d /tmp/assent-global-XXXXXX)
daemon_home="$work/home/.assent"
cleanup() {
  if [ -x "$work/prefix/bin/assent" ]; then
    HOME="$work/home" ASSENT_HOME="$daemon_home" ASSENT_NO_AUTOSPAWN=1 "$work/prefix/bin/assent" daemon stop >/dev/null 2>&1 || true
  fi
  pkill -f "$work/prefix/" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "global install check FAILED: $*" >&2; exit 1; }

if ! npm config ls -l 2>/dev/null | grep -q '^strict-allow-scripts'; then
  echo "global install check skipped: npm $(npm --version) has no install-script policy (strict-allow-scripts); npm 11 has it" >&2
  exit 0
fi

[ -f dist/bin/assent.js ] || npm run build
tarball=$(npm pack --ignore-scripts --silent --pack-destination "$work")
mkdir -p "$work/prefix/lib" "$work/home"

# The strict policy turns every install script not allowed into an error, and
# its warning into nothing: the output is kept, and must not mention one.
if ! npm i -g --prefix "$work/prefix" --prefer-offline --no-audit --no-fund --strict-allow-scripts \
  --allow-scripts=better-sqlite3 "$work/$tarball" >"$work/install.log" 2>&1; then
  cat "$work/install.log" >&2
  fail "npm i -g of $tarball under --strict-allow-scripts"
fi
if grep -qi 'install script\|allowScripts\|allow-scripts' "$work/install.log"; then
  cat "$work/install.log" >&2
  fail "npm warned about install scripts"
fi

assent="$work/prefix/bin/assent"
version=$("$assent" --version)
[ "$version" = "$(node -p 'require("./package.json").version')" ] || fail "assent --version said '$version'"

export HOME="$work/home" ASSENT_HOME="$daemon_home"
dry=$("$assent" install claude-code --dry-run 2>&1) || { echo "$dry" >&2; fail "assent install claude-code --dry-run"; }
installed_hook="$work/prefix/lib/node_modules/assent/dist/bin/assent-hook.js"
grep -qF "$installed_hook" <<<"$dry" || { echo "$dry" >&2; fail "the dry run does not name the installed hook entry $installed_hook"; }
[ ! -e "$HOME/.claude/settings.json" ] || fail "--dry-run wrote $HOME/.claude/settings.json"

# No daemon runs: the hook starts one from the global install, and the read-only command is allowed.
event='{"session_id":"global-check","transcript_path":"/tmp/t.jsonl","cwd":"'"$work"'","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","description":"list"},"tool_use_id":"toolu_global_check"}'
answer=$(node "$installed_hook" claude-code <<<"$event") || fail "the installed hook exited $? for ls: $answer"
decision=$(node -e 'const a = JSON.parse(process.argv[1] || "{}"); console.log(a.hookSpecificOutput?.permissionDecision ?? "none")' "$answer")
[ "$decision" = "allow" ] || fail "the installed hook answered '$answer' for ls"
pid=$(cat "$daemon_home/daemon.pid")
grep -qF "$work/prefix/" "/proc/$pid/cmdline" || fail "the auto-spawned daemon ($pid) is not the global install's: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
audit=$("$assent" audit --json)
grep -q '"tool":"Bash"' <<<"$audit" || fail "the allow has no audit line: $audit"
"$assent" audit verify >/dev/null || fail "assent audit verify"
echo "global install check passed: $tarball under --strict-allow-scripts, assent $version, install --dry-run, a hook allow through an auto-spawned daemon (pid $pid)"
