#!/usr/bin/env bash
# build-terraform.sh VERSION ARCHIVE SHA256 OUT: builds Terraform VERSION (e.g. 1.15.9) from its
# source archive ARCHIVE (a `git archive` of the release tag with every nested module the build
# needs), whose sha256 must be SHA256, into OUT. Its Go dependencies come from the Go module proxy;
# nothing else is fetched. OUT is kept between runs: when it already reports VERSION, nothing is
# done (and the archive is not needed).
set -euo pipefail

usage="usage: build-terraform.sh VERSION ARCHIVE SHA256 OUT"
want=${1:?$usage}
want=${want#v}
archive=${2:?$usage}
sum=${3:?$usage}
out=${4:?$usage}

# An empty CLI config: one named by TF_CLI_CONFIG_FILE but missing makes terraform print a warning.
# The output is read whole before it is matched: `grep -q` would close the pipe at the first
# match, and with pipefail the SIGPIPE the CLI may then get would count as a mismatch.
have=""
if [ -x "$out" ]; then
	have=$(TF_CLI_CONFIG_FILE=/dev/null "$out" version -json 2>/dev/null || true)
fi
if [[ $have =~ \"terraform_version\":\ *\"${want//./\\.}\" ]]; then
	echo "$out is already Terraform $want"
	exit 0
fi

if [ ! -f "$archive" ]; then
	echo "build-terraform.sh: $archive not found (set TERRAFORM_SRC to the Terraform $want source archive)" >&2
	exit 1
fi
got=$(sha256sum "$archive" | awk '{print $1}')
if [ "$got" != "$sum" ]; then
	echo "build-terraform.sh: $archive has sha256 $got, want $sum" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

tar xzf "$archive" -C "$tmp"
src="$tmp/terraform-$want"
if [ ! -f "$src/go.mod" ]; then
	echo "build-terraform.sh: $archive does not hold terraform-$want/go.mod" >&2
	exit 1
fi

# dev=no makes it report VERSION without "-dev", as release builds do (a "-dev" prerelease would
# not satisfy required_version constraints).
echo "building Terraform $want from $archive (about 6 minutes of 2 cores on a cold cache)"
(cd "$src" && CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" -o "$tmp/terraform" .)

mkdir -p "$(dirname "$out")"
mv "$tmp/terraform" "$out"
TF_CLI_CONFIG_FILE=/dev/null "$out" version
