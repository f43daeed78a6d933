#!/usr/bin/env bash
# build-tofu.sh VERSION OUT: builds OpenTofu VERSION (a Go module version, e.g. v1.12.6) into OUT,
# from its Go module, so nothing is fetched from anywhere but the Go module proxy. OUT is kept
# between runs: when it already reports VERSION, nothing is done.
set -euo pipefail

version=${1:?usage: build-tofu.sh VERSION OUT}
out=${2:?usage: build-tofu.sh VERSION OUT}
want=${version#v}

# An empty CLI config: one named by TF_CLI_CONFIG_FILE but missing makes tofu print a warning.
# The output is read whole before it is matched: `grep -q` would close the pipe at the first
# match, and with pipefail the SIGPIPE the CLI may then get would count as a mismatch.
have=""
if [ -x "$out" ]; then
	have=$(TF_CLI_CONFIG_FILE=/dev/null "$out" version -json 2>/dev/null || true)
fi
if [[ $have =~ \"terraform_version\":\ *\"${want//./\\.}\" ]]; then
	echo "$out is already OpenTofu $want"
	exit 0
fi

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# Outside any module, so the project's go.mod and go.sum stay as they are.
dir=$(cd "$tmp" && go mod download -json "github.com/opentofu/opentofu@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "build-tofu.sh: go mod download did not give the module's directory" >&2
	exit 1
fi

# The module cache is read-only: build in a writable copy. -mod=mod lets go fill in any go.sum
# line the module's own go.sum lacks; dev=no makes it report VERSION without "-dev", as release
# builds do (a "-dev" prerelease would not satisfy required_version constraints).
cp -R "$dir" "$tmp/src"
chmod -R u+w "$tmp/src"
echo "building OpenTofu $want from the Go module (a few minutes on a cold cache)"
(cd "$tmp/src" && GOFLAGS="${GOFLAGS:-} -mod=mod" go build -trimpath \
	-ldflags "-X github.com/opentofu/opentofu/version.dev=no" -o "$tmp/tofu" ./cmd/tofu)

mkdir -p "$(dirname "$out")"
mv "$tmp/tofu" "$out"
TF_CLI_CONFIG_FILE=/dev/null "$out" version
