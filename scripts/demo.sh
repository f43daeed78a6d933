#!/usr/bin/env bash
# End-to-end demo: build the provider and the local reference server, start
# the server on a free loopback port, and apply examples/quickstart against it.
#
# The quickstart is copied to ./.demo/ (git-ignored) and applied there, so the
# repository's examples stay clean; the PNG files it writes end up in
# ./.demo/out/. Terraform state, plugin data and the binaries live in a
# temporary directory that is removed on exit, so the demo can be rerun.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

command -v terraform >/dev/null || { echo "demo: terraform is not on PATH" >&2; exit 1; }
command -v go >/dev/null || { echo "demo: go is not on PATH" >&2; exit 1; }
[ -d examples/quickstart ] || { echo "demo: examples/quickstart is missing" >&2; exit 1; }

export CHECKPOINT_DISABLE=1
export TF_IN_AUTOMATION=1
# Plain output when not on a terminal (CI logs, pipes).
if [ ! -t 1 ]; then export TF_CLI_ARGS="-no-color"; fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/svc-demo.XXXXXX")"
work="$repo_root/.demo"
emulator_pid=""

cleanup() {
	local rc=$?
	if [ -n "$emulator_pid" ] && kill -0 "$emulator_pid" 2>/dev/null; then
		kill "$emulator_pid" 2>/dev/null || true
		wait "$emulator_pid" 2>/dev/null || true
	fi
	if [ $rc -ne 0 ] && [ -s "$tmp/emulator.log" ]; then
		echo "--- emulator log (last 30 lines) ---" >&2
		tail -n 30 "$tmp/emulator.log" >&2 || true
	fi
	rm -rf "$tmp"
	# Keep the outputs, drop everything that would make a rerun differ.
	rm -rf "$work/.terraform" "$work/.terraform.lock.hcl" "$work"/terraform.tfstate* "$work"/*.tfplan
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n==> %s\n' "$*"; }

step "Building the provider and the emulator into $tmp"
mkdir -p "$tmp/plugins"
go build -o "$tmp/plugins/terraform-provider-svc" .
go build -o "$tmp/svc-emulator" ./cmd/svc-emulator

cat >"$tmp/terraform.rc" <<RC
provider_installation {
  dev_overrides {
    "registry.terraform.io/svc-org/svc" = "$tmp/plugins"
  }
  direct {}
}
RC
export TF_CLI_CONFIG_FILE="$tmp/terraform.rc"
export TF_DATA_DIR="$tmp/tfdata"

step "Starting the emulator"
"$tmp/svc-emulator" -listen 127.0.0.1:0 -url-file "$tmp/url" >"$tmp/emulator.log" 2>&1 &
emulator_pid=$!

# The emulator writes its base URL to the file atomically once it listens.
for _ in $(seq 1 200); do
	[ -s "$tmp/url" ] && break
	if ! kill -0 "$emulator_pid" 2>/dev/null; then
		echo "demo: the emulator exited before it was ready" >&2
		exit 1
	fi
	sleep 0.1
done
if [ ! -s "$tmp/url" ]; then
	echo "demo: the emulator did not write $tmp/url within 20 s" >&2
	exit 1
fi
SVC_ENDPOINT="$(tr -d '[:space:]' <"$tmp/url")"
export SVC_ENDPOINT
echo "emulator listening on $SVC_ENDPOINT (pid $emulator_pid)"

step "Copying examples/quickstart to .demo/"
rm -rf "$work"
mkdir -p "$work"
cp -R examples/quickstart/. "$work/"
rm -rf "$work/out" "$work/.terraform" "$work/.terraform.lock.hcl" "$work"/terraform.tfstate*

step "terraform apply (provider from dev_overrides, no init needed)"
terraform -chdir="$work" apply -auto-approve -input=false

step "terraform output"
terraform -chdir="$work" output

step "Files written to .demo/out/"
shopt -s nullglob globstar
pngs=("$work"/out/**/*.png)
if [ ${#pngs[@]} -eq 0 ]; then
	echo "demo: no PNG files under .demo/out/" >&2
	exit 1
fi
png_magic="89 50 4e 47 0d 0a 1a 0a"
bad=0
for f in "${pngs[@]}"; do
	magic="$(head -c 8 "$f" | od -An -tx1 | tr -s ' ' | sed 's/^ //; s/ $//')"
	size="$(wc -c <"$f" | tr -d ' ')"
	rel="${f#"$repo_root"/}"
	if [ "$magic" = "$png_magic" ]; then
		printf '  %-50s %8s bytes  PNG ok\n' "$rel" "$size"
	else
		printf '  %-50s %8s bytes  NOT A PNG (starts with %s)\n' "$rel" "$size" "$magic"
		bad=1
	fi
done
[ $bad -eq 0 ] || { echo "demo: some outputs are not PNG files" >&2; exit 1; }

step "Done: ${#pngs[@]} PNG file(s) in .demo/out/"
