#!/bin/sh
# The Debian package on this machine (make test-deb, .ci/run): installs it, checks what it put
# where, runs the packaged binary with the Swift toolchain hidden, removes it (the configuration
# and state stay), and purges it (they go). Needs root: dpkg -i, unshare -m.
#   packaging/test-deb.sh dist/pushward-bridge_<version>_<arch>.deb
set -eu

deb=$1
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
toolchain=/opt/swift

fail() {
	echo "test-deb: FAIL: $*" >&2
	exit 1
}
pass() { echo "test-deb: ok: $*"; }

[ "$(id -u)" -eq 0 ] || fail "needs root (dpkg -i, unshare -m); run it as root or in CI"
[ -f "$deb" ] || fail "no package at $deb (make deb)"
version=$(dpkg-deb -f "$deb" Version)

# A clean start: a package left by an earlier, interrupted run goes first.
if dpkg-query -W -f='${Status}' pushward-bridge 2>/dev/null | grep -q 'ok'; then
	dpkg -P pushward-bridge >/dev/null
fi

depends=$(dpkg-deb -f "$deb" Depends)
case "$depends" in
*swift* | *Swift*) fail "Depends names the toolchain: $depends" ;;
esac
echo "$depends" | grep -q 'libc6' || fail "Depends was not computed from the binary: $depends"
pass "Depends: $depends"

# --- install ---------------------------------------------------------------------------------
dpkg -i "$deb" >"${TMPDIR:-/tmp}/test-deb-install.log" 2>&1 || {
	cat "${TMPDIR:-/tmp}/test-deb-install.log" >&2
	fail "dpkg -i"
}
grep -q 'enabled, but not started' "${TMPDIR:-/tmp}/test-deb-install.log" ||
	fail "postinst did not say the service is enabled but not started"
for path in /usr/bin/pushward-bridge /usr/lib/systemd/system/pushward-bridge.service \
	/usr/lib/systemd/system/pushward-bridge.socket /usr/lib/sysusers.d/pushward-bridge.conf \
	/usr/lib/tmpfiles.d/pushward-bridge.conf /etc/pushward-bridge/config.json \
	/usr/share/man/man1/pushward-bridge.1.gz /usr/share/man/man5/pushward-bridge.json.5.gz \
	/usr/share/doc/pushward-bridge/copyright /usr/share/doc/pushward-bridge/changelog.gz; do
	[ -e "$path" ] || fail "installed, but $path is missing"
done
grep -q '^ExecStart=/usr/bin/pushward-bridge serve ' /usr/lib/systemd/system/pushward-bridge.service ||
	fail "the unit does not start /usr/bin/pushward-bridge"
dpkg-query -W -f='${Conffiles}\n' pushward-bridge | grep -q '/etc/pushward-bridge/config.json' ||
	fail "/etc/pushward-bridge/config.json is not a conffile"
getent passwd pushward-bridge >/dev/null || fail "no pushward-bridge user"
[ "$(stat -c '%U %a' /var/lib/pushward-bridge)" = "pushward-bridge 700" ] ||
	fail "/var/lib/pushward-bridge is $(stat -c '%U %a' /var/lib/pushward-bridge)"
[ "$(stat -c '%U %G %a' /etc/pushward-bridge/config.json)" = "root pushward-bridge 640" ] ||
	fail "config.json is $(stat -c '%U %G %a' /etc/pushward-bridge/config.json)"
[ "$(stat -c '%U %a' /etc/pushward-bridge/credentials)" = "root 700" ] || fail "no credentials directory"
if [ -x /usr/bin/deb-systemd-helper ]; then
	[ -L /etc/systemd/system/multi-user.target.wants/pushward-bridge.service ] || fail "the service is not enabled"
fi
pass "installed: files, conffile, user pushward-bridge, directories, unit enabled"
# The packaged units verify clean; verify also looks up their Documentation= man pages.
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify /usr/lib/systemd/system/pushward-bridge.service \
		/usr/lib/systemd/system/pushward-bridge.socket 2>&1) || fail "systemd-analyze verify: $out"
	[ -z "$out" ] || fail "systemd-analyze verify: $out"
	pass "systemd-analyze verify: the packaged units and their man pages"
fi

# The manual documents every command and option of the packaged binary.
/usr/bin/pushward-bridge help --json >"${TMPDIR:-/tmp}/test-deb-commands.json"
MANWIDTH=200 man -l /usr/share/man/man1/pushward-bridge.1.gz 2>/dev/null >"${TMPDIR:-/tmp}/test-deb-man.txt"
python3 - "${TMPDIR:-/tmp}/test-deb-commands.json" "${TMPDIR:-/tmp}/test-deb-man.txt" <<'PY' || fail "the man page misses commands or options"
import json, sys
commands = json.load(open(sys.argv[1]))["commands"]
text = open(sys.argv[2]).read().replace("\u2010", "-")
missing = [c["name"] for c in commands if c["name"] not in text]
missing += [f'{c["name"]} {o}' for c in commands for o in c["options"] + c["flags"] + c["aliases"] if o not in text]
if missing:
    print("not in pushward-bridge(1):", missing, file=sys.stderr)
    sys.exit(1)
PY
pass "pushward-bridge(1) names every command and option the binary accepts"

# --- the packaged binary, toolchain hidden -------------------------------------------------------
# An empty directory over the toolchain in a mount namespace of its own: whatever the binary
# loaded from there would fail here.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/empty"
chmod 0755 "$work"
payload="$repo/Tests/BridgeCoreTests/Fixtures/workflow_run.requested.json"
[ -f "$payload" ] || fail "no fixture $payload"
cp "$payload" "$work/payload.json"
cat >"$work/hidden.sh" <<'HIDDEN'
set -eu
work=$1 version=$2 toolchain=$3
fail() { echo "test-deb: FAIL: $*" >&2; exit 1; }
[ ! -e "$toolchain/usr/bin/swift" ] || fail "the toolchain is still visible"
if ldd /usr/bin/pushward-bridge | grep -i -e swift -e 'not found'; then fail "links the toolchain"; fi

[ "$(/usr/bin/pushward-bridge version)" = "pushward-bridge $version" ] || fail "version"

status=0
/usr/bin/pushward-bridge check-config --config /etc/pushward-bridge/config.json >"$work/check.out" 2>"$work/check.err" ||
	status=$?
[ "$status" -eq 78 ] || fail "check-config on the packaged configuration exited $status, not 78"
[ "$(grep -c '^pushward-bridge: configuration:' "$work/check.err")" -eq 1 ] || fail "not one error line: $(cat "$work/check.err")"
grep -q 'no webhook secret' "$work/check.err" || fail "the error does not name the missing secret"
if grep -q -i -e backtrace -e 'fatal error' -e 'stack dump' "$work/check.err"; then fail "a backtrace"; fi
echo "test-deb: ok: check-config: $(grep '^pushward-bridge: configuration:' "$work/check.err")"

# serve, dry-run (no PushWard key), on loopback ports the kernel picks free.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
secret=0123456789abcdef0123456789abcdef
cat >"$work/config.json" <<CONFIG
{"listen": "127.0.0.1:$port", "admin_listen": "unix:$work/admin.sock",
 "database": "$work/bridge.sqlite", "github": {"webhook_secrets": ["$secret"]}}
CONFIG
/usr/bin/pushward-bridge serve --config "$work/config.json" 2>"$work/serve.err" &
serve=$!
ready=no
for _ in $(seq 1 100); do
	if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then ready=yes; break; fi
	sleep 0.1
done
[ "$ready" = yes ] || { kill "$serve" 2>/dev/null; cat "$work/serve.err" >&2; fail "serve never became ready"; }
signature=sha256=$(openssl dgst -sha256 -hmac "$secret" -r "$work/payload.json" | cut -d' ' -f1)
answer=$(curl -sS -o "$work/answer" -w '%{http_code}' -X POST "http://127.0.0.1:$port/webhook" \
	-H 'Content-Type: application/json' -H 'X-GitHub-Event: workflow_run' \
	-H 'X-GitHub-Delivery: test-deb-1' -H "X-Hub-Signature-256: $signature" --data-binary @"$work/payload.json")
unsigned=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/webhook" \
	-H 'Content-Type: application/json' -H 'X-GitHub-Event: workflow_run' \
	-H 'X-GitHub-Delivery: test-deb-2' -H "X-Hub-Signature-256: sha256=$(printf '0%.0s' $(seq 64))" \
	--data-binary @"$work/payload.json")
kill -TERM "$serve"
status=0
wait "$serve" || status=$?
[ "$answer" = 202 ] || { cat "$work/serve.err" >&2; fail "the signed delivery got $answer: $(cat "$work/answer")"; }
[ "$unsigned" = 401 ] || fail "a delivery with a wrong signature got $unsigned"
[ "$status" -eq 0 ] || { cat "$work/serve.err" >&2; fail "serve exited $status on SIGTERM"; }
/usr/bin/pushward-bridge deliveries list --database "$work/bridge.sqlite" | grep -q 'test-deb-1' ||
	fail "the delivery is not in the database"
echo "test-deb: ok: serve took a signed delivery (202), refused a forged one (401), stopped on SIGTERM"
HIDDEN
unshare -m sh -c "mount --bind '$work/empty' '$toolchain' && sh '$work/hidden.sh' '$work' '$version' '$toolchain'" ||
	fail "the packaged binary with the toolchain hidden"
pass "version, check-config, serve with $toolchain hidden"

# --- remove: the binary goes, configuration and state stay -------------------------------------
echo 'kept' >/var/lib/pushward-bridge/marker
dpkg -r pushward-bridge >/dev/null
[ ! -e /usr/bin/pushward-bridge ] || fail "the binary is still there after dpkg -r"
[ ! -e /usr/lib/systemd/system/pushward-bridge.service ] || fail "the unit is still there after dpkg -r"
[ -f /etc/pushward-bridge/config.json ] || fail "dpkg -r removed the conffile"
[ -f /var/lib/pushward-bridge/marker ] || fail "dpkg -r removed the state"
dpkg-query -W -f='${Status}' pushward-bridge | grep -q 'config-files' || fail "not in config-files state"
pass "removed: binary and units gone, configuration and state kept"

# --- purge: configuration and state go -------------------------------------------------------
dpkg -P pushward-bridge >/dev/null
[ ! -e /etc/pushward-bridge ] || fail "/etc/pushward-bridge is still there after dpkg -P"
[ ! -e /var/lib/pushward-bridge ] || fail "/var/lib/pushward-bridge is still there after dpkg -P"
if dpkg-statoverride --list | grep -q pushward-bridge; then fail "statoverrides left"; fi
[ ! -e /etc/systemd/system/multi-user.target.wants/pushward-bridge.service ] || fail "the enablement link is left"
dpkg-query -W pushward-bridge >/dev/null 2>&1 && fail "dpkg still knows the package"
pass "purged: configuration, secrets and state gone (the system user stays, as Debian keeps them)"

# --- no systemd-sysusers or systemd-tmpfiles: adduser and install make the same ----------------
# Both hidden in a mount namespace (/dev/null over them is no executable), the user deleted first
# so the postinst has to create it.
userdel pushward-bridge 2>/dev/null || true
unshare -m sh -c "mount --bind /dev/null /usr/bin/systemd-sysusers && mount --bind /dev/null /usr/bin/systemd-tmpfiles &&
	! command -v systemd-sysusers >/dev/null && dpkg -i '$deb' >/dev/null" || fail "dpkg -i without systemd-sysusers"
getent passwd pushward-bridge >/dev/null || fail "adduser made no pushward-bridge user"
[ "$(getent passwd pushward-bridge | cut -d: -f6,7)" = "/var/lib/pushward-bridge:/usr/sbin/nologin" ] ||
	fail "the adduser user is $(getent passwd pushward-bridge)"
[ "$(stat -c '%U %a' /var/lib/pushward-bridge)" = "pushward-bridge 700" ] || fail "no state directory without tmpfiles"
[ "$(stat -c '%U %a' /etc/pushward-bridge/credentials)" = "root 700" ] || fail "no credentials directory without tmpfiles"
dpkg -P pushward-bridge >/dev/null
[ ! -e /var/lib/pushward-bridge ] || fail "purge left /var/lib/pushward-bridge"
pass "without systemd-sysusers and systemd-tmpfiles: adduser made the user, the postinst the directories"
