#!/usr/bin/env bash
# build-versitygw.sh OUT: builds Versity S3 Gateway, the S3-compatible server the bucket tests
# start, into OUT from its Go module at the version tools/versitygw/go.mod pins (checked against
# its go.sum), so nothing is fetched from anywhere but the Go module proxy. OUT is kept between
# runs: when it already reports that version, nothing is done.
set -euo pipefail

out=${1:?usage: build-versitygw.sh OUT}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
modfile="$root/tools/versitygw/go.mod"
module=github.com/versity/versitygw

version=$(go list -modfile="$modfile" -m -f '{{.Version}}' "$module")

# The output is read whole before it is matched: `grep -q` would close the pipe at the first
# match, and with pipefail the SIGPIPE the binary may then get would count as a mismatch.
have=""
if [ -x "$out" ]; then
	have=$("$out" --version 2>/dev/null || true)
fi
if [[ $have =~ Version\ *:\ *${version//./\\.}($|[[:space:]]) ]]; then
	echo "$out is already versitygw $version"
	exit 0
fi

echo "building versitygw $version from the Go module (about 110 CPU-seconds with a cold build cache)"
mkdir -p "$(dirname "$out")"
# main.Version is what `versitygw --version` reports (its own Makefile sets it the same way).
go build -modfile="$modfile" -trimpath -ldflags "-X main.Version=$version" -o "$out.tmp" "$module/cmd/versitygw"
mv "$out.tmp" "$out"
"$out" --version
