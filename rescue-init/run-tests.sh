#!/bin/bash
# Run the rescue-init checks; print PASS/FAIL per test and, last, the
# "N passed, N failed" line, which also goes to the summary file.
#
# usage: run-tests.sh SUMMARY TEST_PLAIN TEST_SANITIZED BINARY MAX_SIZE BUILD_CMD
# BUILD_CMD builds the binary a second time (elsewhere) for the
# reproducibility check.
set -u
summary=$1 plain=$2 san=$3 bin=$4 max=$5 build_cmd=$6
passed=0 failed=0

result() {	# result PASS|FAIL name [why]
	echo "$1 $2${3:+: $3}"
	if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

# A unit-test binary prints PASS/FAIL lines and its own total; a crash
# (a sanitizer report) counts as one more failure under the binary's name.
unit() {	# unit LABEL BINARY
	local out rc line
	out=$("$2" 2>&1); rc=$?
	while IFS= read -r line; do
		case $line in
		PASS\ *) result PASS "$1/${line#PASS }" ;;
		FAIL\ *) line=${line#FAIL }; result FAIL "$1/${line%%:*}" "${line#*: }" ;;
		esac
	done <<<"$out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; then
		result FAIL "$1/run" "exit status $rc"
		printf '%s\n' "$out" | tail -30
	fi
}

unit plain "$plain"
unit asan+ubsan "$san"

size=$(stat -c %s "$bin")
if [ "$size" -lt "$max" ]; then
	result PASS "binary/size ($size < $max bytes)"
else
	result FAIL "binary/size" "$size bytes, budget $max"
fi

if file_out=$(LC_ALL=C readelf -lW "$bin" 2>&1) && ! grep -q INTERP <<<"$file_out"; then
	result PASS "binary/static"
else
	result FAIL "binary/static" "has a program interpreter"
fi

if out=$(bash -c "$build_cmd" 2>&1); then
	repro=${build_cmd##*-o }; repro=${repro%% *}
	if cmp -s "$bin" "$repro"; then
		result PASS "binary/reproducible"
	else
		result FAIL "binary/reproducible" "second build differs from $bin"
	fi
else
	result FAIL "binary/reproducible" "second build failed: $out"
fi

line="$passed passed, $failed failed"
echo "$line"
echo "$line" > "$summary"
[ "$failed" -eq 0 ]
