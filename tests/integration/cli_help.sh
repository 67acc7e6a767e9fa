#!/usr/bin/env bash
# radiance --version names the release (CMakeLists.txt's project version), the plugin ABI and the
# kernel libraries; `radiance serve --help` lists every flag serve's parser accepts (read from
# frontend/app/serve_options.cpp), each with a [default: ...] or a line of meaning.
# Mutations run (2026-12-04): --cache-dir dropped from kUsage fails "--cache-dir missing from
# --help"; --version printing the usage (as it did) fails the release line.
# usage: cli_help.sh RADIANCE_BIN SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
fail=0
say() { echo "FAIL $*"; fail=1; }

version=$(sed -n 's/^project(radiance VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
out=$("$bin" --version 2>&1) || say "--version exited $?"
grep -qx "radiance $version" <<<"$out" || say "--version lacks 'radiance $version': $out"
grep -q "^plugin ABI [0-9]" <<<"$out" || say "--version lacks the plugin ABI: $out"
grep -q "^kernel library libref " <<<"$out" || say "--version lacks the kernel libraries: $out"

help=$("$bin" serve --help 2>&1) || say "serve --help exited $?"
flags=$(grep -oE 'args\.is\("--[a-z-]*"' "$src/frontend/app/serve_options.cpp" | sed 's/args\.is("\(.*\)"/\1/' | sort -u)
[ -n "$flags" ] || say "no flags found in main.cpp (the parser's shape changed?)"
n=0
for f in $flags; do
  n=$((n + 1))
  grep -qE -- "(^|[ ,])$f([ ,]|$)" <<<"$help" || say "$f missing from --help"
done
"$bin" bogus >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || say "an unknown command exited $rc, not 2"
[ $fail -eq 0 ] && echo "ok: --version and --help ($n flags listed)"
exit $fail
