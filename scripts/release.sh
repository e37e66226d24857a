#!/usr/bin/env bash
# Builds the release archives of Chopin: one per desktop (linux, darwin and
# windows on amd64 and arm64), each a static CGO_ENABLED=0 binary stamped
# with the version, commit and date, with README.md and
# chopin.toml.example beside it, and SHA256SUMS over the archives.
#
#   scripts/release.sh v1.2.0        # writes dist/
#
# Windows binaries are GUI-subsystem programs (-H=windowsgui): a
# double-click opens the browser without a console window; started from a
# terminal, chopin.exe attaches to its console (app/console_windows.go).
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:?usage: scripts/release.sh VERSION (such as v1.2.0)}
commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain)" ]; then
	commit="$commit+modified"
fi
date=$(git show -s --format=%cI HEAD) # the commit's date: the same tree gives the same archives
pkg=github.com/chopin-desktop/chopin/version
dist=dist
rm -rf "$dist"
mkdir -p "$dist"

for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
	goos=${target%/*} goarch=${target#*/}
	name=chopin_${version#v}_${goos}_${goarch}
	stage=$dist/$name
	mkdir -p "$stage"
	ldflags="-s -w -X $pkg.Version=$version -X $pkg.Commit=$commit -X $pkg.BuildDate=$date"
	exe=chopin
	if [ "$goos" = windows ]; then
		ldflags="$ldflags -H=windowsgui"
		exe=chopin.exe
	fi
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$stage/$exe" .
	cp README.md chopin.toml.example "$stage/"
	# Fixed times and owners, so that rebuilding the same commit gives the same bytes.
	find "$stage" -exec touch -d "$date" {} +
	if [ "$goos" = windows ]; then
		(cd "$dist" && zip -qX -r "$name.zip" "$name")
	else
		tar -C "$dist" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$date" -czf "$dist/$name.tar.gz" "$name"
	fi
	rm -rf "$stage"
	echo "$target: $name"
done

(cd "$dist" && sha256sum -- *.tar.gz *.zip >SHA256SUMS)
cat "$dist/SHA256SUMS"
