#!/usr/bin/env bash
# Mutation run over a fixed list of mutants (scripts/mutants.txt): each is
# one small deliberate bug, applied to a source file, tested with the tests
# of the packages it names (with a timeout), and reverted. A mutant is
# killed when its tests fail; one that does not build is reported apart.
#
#   scripts/mutants.sh [list] [area]    # default list: scripts/mutants.txt
#   MUTANT_CHECK=1 scripts/mutants.sh   # only check that every mutant applies
#
# Run it from the module root with a clean tree for the files it touches.
# It prints one line per mutant and a score per area; docs/testing.md
# records the last run.
set -u
list=${1:-scripts/mutants.txt}
only=${2:-}
timeout=${MUTANT_TIMEOUT:-300}
declare -A killed survived total
results=()
backup=$(mktemp)
log=$(mktemp)
current=""
restore() { if [ -n "$current" ]; then cp "$backup" "$current"; current=""; fi; }
trap 'restore; rm -f "$backup" "$log"; exit 130' INT TERM

run_mutant() {
	local area=$1 tests=$2 file=$3 name=$4 old=$5 new=$6
	if [ -n "$only" ] && [ "$only" != "$area" ]; then return; fi
	local n
	n=$(OLD="$old" perl -0ne '$c = () = /\Q$ENV{OLD}\E/g; print $c' "$file")
	if [ "$n" != 1 ]; then
		echo "BAD     $area $name: the text occurs $n times in $file" >&2
		[ -n "${MUTANT_CHECK:-}" ] && return
		exit 2
	fi
	if [ -n "${MUTANT_CHECK:-}" ]; then
		echo "applies  $area $name"
		return
	fi
	cp "$file" "$backup"
	current=$file
	OLD="$old" NEW="$new" perl -0pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/' "$file"
	local status
	# shellcheck disable=SC2086
	timeout "$timeout" go test -count=1 -failfast -vet=off -skip 'TestBrowser' ${tests//,/ } >"$log" 2>&1
	status=$?
	restore
	local verdict
	if grep -aq '\[build failed\]\|\[setup failed\]' "$log"; then
		verdict=NOBUILD
	elif [ $status -eq 0 ]; then
		verdict=SURVIVED
		survived[$area]=$((${survived[$area]:-0} + 1))
	else
		verdict=KILLED
		[ $status -eq 124 ] && verdict="KILLED(timeout)"
		killed[$area]=$((${killed[$area]:-0} + 1))
	fi
	[ "$verdict" != NOBUILD ] && total[$area]=$((${total[$area]:-0} + 1))
	printf '%-16s %-12s %s\n' "$verdict" "$area" "$name"
}

area="" tests="" file="" name="" old="" new=""
flush() {
	if [ -n "$name" ]; then run_mutant "$area" "$tests" "$file" "$name" "$old" "$new"; fi
	name="" old="" new=""
}
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	'@ '*)
		flush
		read -r _ area tests file name <<<"$line"
		;;
	'- '*) old+=${old:+$'\n'}${line#- } ;;
	'+ '*) new+=${new:+$'\n'}${line#+ } ;;
	'+') new+=$'\n' ;;
	esac
done <"$list"
flush
rm -f "$backup" "$log"

[ -n "${MUTANT_CHECK:-}" ] && exit 0
echo
printf '%-12s %7s %7s %7s\n' area mutants killed score
for a in $(printf '%s\n' "${!total[@]}" | sort); do
	k=${killed[$a]:-0} n=${total[$a]}
	printf '%-12s %7d %7d %6d%%\n' "$a" "$n" "$k" $((100 * k / n))
done
