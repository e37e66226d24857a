#!/bin/sh
# Runs every fuzz target in the module, one after another, each for FUZZTIME
# (default 10m), and reports the targets that found something. A finding is
# written by Go under the package's testdata/fuzz/<target>/: fix the cause,
# then commit that file, which every later `go test` runs as a regression
# input. See docs/fuzzing.md.
#
#   scripts/fuzz.sh                   # every target, 10 minutes each
#   FUZZTIME=2m scripts/fuzz.sh ./room  # the targets of some packages
#   FUZZPARALLEL=1 scripts/fuzz.sh      # one fuzzing worker (a shared machine)
set -u
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10m}"
parallel=""
if [ -n "${FUZZPARALLEL:-}" ]; then
	parallel="-parallel $FUZZPARALLEL"
fi
pkgs="${*:-./...}"
failed=""
for pkg in $(go list $pkgs); do
	targets=$(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true)
	for target in $targets; do
		echo "== $pkg $target for $fuzztime"
		if ! go test "$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" $parallel; then
			failed="$failed $pkg.$target"
		fi
	done
done
if [ -n "$failed" ]; then
	echo "findings in:$failed (inputs under each package's testdata/fuzz/)"
	exit 1
fi
echo "every fuzz target ran $fuzztime without a finding"
