# Shared by the shell suites (tests/build.sh, tests/cache.sh): counting,
# logging and the scratch copy of the source tree.  Source it, then call
# suite_init NAME LOGDIR.

# suite_init NAME LOGDIR: counters at zero, an empty LOGDIR/NAME.log.
suite_init() {
	suite=$1 logdir=$2
	log=$logdir/$suite.log
	passed=0 failed=0
	mkdir -p "$logdir"
	: >"$log"
}

# export_epochs: SOURCE_DATE_EPOCH and KERNEL_EPOCH, as the top make has
# them (the caller sets both), for the builds a suite starts.
export_epochs() {
	: "${SOURCE_DATE_EPOCH:?}" "${KERNEL_EPOCH:?}"
	export SOURCE_DATE_EPOCH KERNEL_EPOCH
}

pass() { passed=$((passed + 1)); echo "PASS $suite: $1" | tee -a "$log"; }
fail() { failed=$((failed + 1)); echo "FAIL $suite: $1 (log: $log)" | tee -a "$log"; }
# run CMD...: CMD with its output in the log.
run() { echo "\$ $*" >>"$log"; "$@" >>"$log" 2>&1; }
# check WHAT CMD...: pass WHAT when CMD succeeds.
check() { if "${@:2}"; then pass "$1"; else fail "$1"; fi; }

# finish: write LOGDIR/NAME.summary ("N passed, N failed") and exit.
finish() {
	echo "$passed passed, $failed failed" >"$logdir/$suite.summary"
	echo "$suite: $passed passed, $failed failed"
	exit $((failed > 0))
}

# copy_source TOP DEST: the source tree as git sees it (tracked and
# untracked, not ignored) into DEST, mtimes kept: a clone of the working
# tree, uncommitted changes included, in another directory.
copy_source() {
	mkdir -p "$2" &&
		(cd "$1" && git ls-files -z -co --exclude-standard |
			tar --null --ignore-failed-read -T - -cf - 2>>"$log") | tar -xpf - -C "$2"
}
