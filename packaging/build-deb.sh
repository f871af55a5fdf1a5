#!/bin/sh
# Assembles dist/pushward-bridge_<version>_<arch>.deb from a built binary and the repository's
# files (see README, "Install from the Debian package"). Called by `make deb`:
#   packaging/build-deb.sh BINARY MANDIR OUTDIR
# BINARY: the static release build; MANDIR: the generated pushward-bridge.1 and
# pushward-bridge.json.5. The version is what BINARY prints, the architecture dpkg's.
#
# A tree assembled by hand and `dpkg-deb --build`, with dpkg-shlibdeps and dpkg-gencontrol for the
# control file: the package is built from a binary SwiftPM made, not from a Debian source package,
# so debian/rules and debhelper's sequence would only wrap these same steps.
set -eu

binary=$1
mandir=$2
outdir=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

version=$("$binary" version | sed -n 's/^pushward-bridge //p')
arch=$(dpkg --print-architecture)
[ -n "$version" ] || { echo "build-deb: $binary printed no version" >&2; exit 1; }
changelog_version=$(dpkg-parsechangelog -l "$here/debian/changelog" -S Version)
if [ "$changelog_version" != "$version" ]; then
	echo "build-deb: the binary is $version but packaging/debian/changelog's last entry is" \
		"$changelog_version: add an entry for $version" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# debian/<package> of a scratch source tree: where dpkg-shlibdeps and dpkg-gencontrol expect it.
root=$work/src/debian/pushward-bridge
doc=$root/usr/share/doc/pushward-bridge

install -d -m 0755 "$root/DEBIAN"
install -D -m 0755 "$binary" "$root/usr/bin/pushward-bridge"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/pushward-bridge"

# A binary that needs the toolchain's shared libraries would install and then not start:
# dpkg-shlibdeps finds no Debian package for them and would leave them out of Depends.
toolchain_libraries=$(readelf -d "$root/usr/bin/pushward-bridge" |
	sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -E '^lib(swift|Foundation|dispatch|BlocksRuntime|_Foundation|XCTest|Testing)' || true)
if [ -n "$toolchain_libraries" ]; then
	echo "build-deb: $binary links the Swift toolchain's libraries (not a --static-swift-stdlib build?):" \
		$toolchain_libraries >&2
	exit 1
fi

# The units name the installed binary and the packaged documentation.
sed -e 's#/usr/local/bin/pushward-bridge#/usr/bin/pushward-bridge#' \
	-e 's#^Documentation=.*#Documentation=man:pushward-bridge(1) man:pushward-bridge.json(5)#' \
	-e 's#^\# Install with `make install`#\# Installed by the Debian package#' \
	-e 's#(see README)#(see pushward-bridge(1))#' \
	"$repo/deploy/pushward-bridge.service" >"$work/pushward-bridge.service"
install -D -m 0644 "$work/pushward-bridge.service" "$root/usr/lib/systemd/system/pushward-bridge.service"
install -D -m 0644 "$repo/deploy/pushward-bridge.socket" "$root/usr/lib/systemd/system/pushward-bridge.socket"
install -D -m 0644 "$repo/deploy/pushward-bridge.sysusers" "$root/usr/lib/sysusers.d/pushward-bridge.conf"
install -D -m 0644 "$repo/deploy/pushward-bridge.tmpfiles" "$root/usr/lib/tmpfiles.d/pushward-bridge.conf"
# The configuration: a conffile, so dpkg keeps the operator's edits on upgrade and remove.
install -D -m 0644 "$repo/deploy/config.production.json" "$root/etc/pushward-bridge/config.json"
echo /etc/pushward-bridge/config.json >"$root/DEBIAN/conffiles"

install -d -m 0755 "$root/usr/share/man/man1" "$root/usr/share/man/man5"
gzip -9n <"$mandir/pushward-bridge.1" >"$root/usr/share/man/man1/pushward-bridge.1.gz"
gzip -9n <"$mandir/pushward-bridge.json.5" >"$root/usr/share/man/man5/pushward-bridge.json.5.gz"
chmod 0644 "$root/usr/share/man/man1/pushward-bridge.1.gz" "$root/usr/share/man/man5/pushward-bridge.json.5.gz"
install -D -m 0644 "$here/debian/copyright" "$doc/copyright"
gzip -9n <"$here/debian/changelog" >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
install -D -m 0644 "$repo/config.example.json" "$doc/examples/config.example.json"

for script in postinst prerm postrm; do
	install -m 0755 "$here/debian/$script" "$root/DEBIAN/$script"
done

# dpkg-shlibdeps and dpkg-gencontrol work on a debian/ directory: a scratch one with the control
# file and changelog. Depends comes from the libraries the binary links (never the toolchain:
# nothing of it is linked dynamically).
cp "$here/debian/control" "$here/debian/changelog" "$work/src/debian/"
(
	cd "$work/src"
	# -eFILE in one word: dpkg-shlibdeps reads "-e FILE" as an -e of nothing, then FILE.
	dpkg-shlibdeps -Tdebian/substvars -edebian/pushward-bridge/usr/bin/pushward-bridge
	dpkg-gencontrol -v"$version" -Tdebian/substvars -Pdebian/pushward-bridge -cdebian/control \
		-ldebian/changelog -fdebian/files
)
if grep -i '^Depends:.*swift' "$root/DEBIAN/control" >&2; then
	echo "build-deb: Depends names the Swift toolchain" >&2
	exit 1
fi
# Checksums of every file but the conffile (dpkg keeps its own for that), as dh_md5sums writes them.
(
	cd "$root"
	find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum \
		>DEBIAN/md5sums
)
chmod 0644 "$root/DEBIAN/md5sums"

mkdir -p "$outdir"
deb="$outdir/pushward-bridge_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
