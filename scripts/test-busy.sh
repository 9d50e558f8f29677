#!/usr/bin/env bash
# Runs the test suite (`make test`, or the command given) while two CPU-bound burner processes
# run beside it, as on a shared machine; kills the burners at the end whatever happens and exits
# with the suite's status. `make test-busy`; CI does not run it.
#
#   scripts/test-busy.sh                       # make test, two burners
#   BURNERS=4 scripts/test-busy.sh             # more load
#   scripts/test-busy.sh make test PARALLEL=   # any command
set -u

BURNERS=${BURNERS:-2}
burners=()
suite=

stop_burners() {
    for pid in "${burners[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${burners[@]}"; do
        wait "$pid" 2>/dev/null
    done
    burners=()
}
stop_suite() {
    # The suite's whole process group: make, pytest and its workers.
    [ -n "$suite" ] && kill -TERM -- "-$suite" 2>/dev/null
}
trap stop_burners EXIT
trap 'stop_suite; exit 130' INT
trap 'stop_suite; exit 143' TERM

for _ in $(seq "$BURNERS"); do
    # A shell loop holds one core at 100% and needs nothing installed.
    ( trap - INT TERM; while :; do :; done ) &
    burners+=("$!")
done
echo "test-busy: ${#burners[@]} CPU burner(s) running (pids ${burners[*]}); load before: $(cut -d' ' -f1-3 /proc/loadavg)"

started=$(date +%s)
[ "$#" -gt 0 ] || set -- make test
# In the background and waited for: a signal to this script is handled at once (bash runs a trap
# only after a foreground command ends), in a process group of its own that is stopped as one.
# A background job of a non-interactive shell ignores SIGINT, and bash cannot undo that: the
# exec wrapper sets SIGINT back to its default, so the suite runs as from a terminal.
setsid python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' "$@" &
suite=$!
wait "$suite"
status=$?
suite=
elapsed=$(( $(date +%s) - started ))
echo "test-busy: status $status after ${elapsed} s with ${#burners[@]} burner(s); load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
