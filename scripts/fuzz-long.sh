#!/bin/sh
# fuzz-long.sh runs each fuzz target given as package:Target for an
# execution count (FUZZ_EXECS, default 10000000) or, when FUZZ_TIME is set
# (a Go duration, e.g. 30m), for that long, and prints one line per target
# as it ends and a table at the end: target, executions, corpus entries
# found, wall time, result. Each target's full output is kept in
# $FUZZ_LOGS (default /tmp/wharf-fuzz-long) as <Target>.log.
#
# A target fails when go test fails and wrote a failing input under its
# package's testdata/fuzz/<Target>/ (that file is the crasher to commit
# with the fix). Go 1.26's coordinator may end a run with a bare "context
# deadline exceeded" when the budget runs out while a worker is busy
# (golang/go#75804): such a run wrote no input and is reported as
# "ok (go#75804)", its executions counted.
#
# FUZZ_MINIMIZE_TIME (default 5s) caps how long a worker minimises each
# input that found new coverage (go test -fuzzminimizetime; Go's default
# is 60s). The session targets' inputs are hundreds of bytes: minimising
# one took 30-60 s, during which the progress line says 0/sec, and a run
# that ends meanwhile never counts those executions
# (bench/results/2026-12-03-fuzzspeed.md).
set -u
GO=${GO:-go}
execs=${FUZZ_EXECS:-10000000}
minimize=${FUZZ_MINIMIZE_TIME:-5s}
logs=${FUZZ_LOGS:-/tmp/wharf-fuzz-long}
if [ -n "${FUZZ_TIME:-}" ]; then budget=$FUZZ_TIME; else budget=${execs}x; fi
mkdir -p "$logs"
table=$(mktemp)
trap 'rm -f "$table"' EXIT
failed=0
for t in "$@"; do
	pkg=${t%%:*}
	name=${t##*:}
	log=$logs/$name.log
	before=$(ls "$pkg/testdata/fuzz/$name" 2>/dev/null | wc -l)
	start=$(date +%s)
	if $GO test -run='^$' -fuzz="^$name\$" -fuzztime="$budget" -fuzzminimizetime="$minimize" "$pkg" >"$log" 2>&1; then
		result=ok
	else
		after=$(ls "$pkg/testdata/fuzz/$name" 2>/dev/null | wc -l)
		if [ "$after" = "$before" ] && grep -q "context deadline exceeded" "$log"; then
			result="ok (go#75804)"
		else
			result=FAIL
			failed=1
		fi
	fi
	secs=$(( $(date +%s) - start ))
	# The coordinator's last progress line: "fuzz: elapsed: 1m0s, execs:
	# 123 (2/sec), new interesting: 4 (total: 56)".
	n=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	found=$(grep -o 'new interesting: [0-9]*' "$log" | tail -1 | cut -d' ' -f3)
	line=$(printf '%-32s %14s %10s %8ss  %s' "$name" "${n:-?}" "${found:-?}" "$secs" "$result")
	echo "$line"
	echo "$line" >>"$table"
	if [ "$result" = FAIL ]; then
		tail -20 "$log"
	fi
done
echo
printf '%-32s %14s %10s %9s  %s\n' TARGET EXECUTIONS NEW TIME RESULT
cat "$table"
echo "budget per target: $budget; logs in $logs"
exit $failed
