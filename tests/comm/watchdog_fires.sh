#!/bin/sh
# watchdog_fires.sh — runs its arguments (mpirun -np 2 watchdog_fires) and passes when the output
# holds exactly one collective-timeout line, from rank 0, naming rank 1 as not arrived, whole
# (not interleaved with another thread's), and no sanitizer or runtime-error report.
out=$("$@" 2>&1)
printf '%s\n' "$out"
timeouts=$(printf '%s\n' "$out" | grep -c 'collective timeout')
whole=$(printf '%s\n' "$out" | grep -cE '^watchdog_fires \(rank 0\): collective timeout: (the test.s barrier|all-reduce #1 \(4096 floats\)) did not finish within 1 s \(--collective-timeout\); not arrived: rank 1 \(stopped, dead, or still computing\); aborting the job$')
if printf '%s\n' "$out" | grep -qE 'ThreadSanitizer|AddressSanitizer|runtime error|did not fire|did not end it'; then
  echo "watchdog_fires.sh: FAILED: a sanitizer report or the watchdog did not fire" >&2
  exit 1
fi
if [ "$timeouts" -ne 1 ] || [ "$whole" -ne 1 ]; then
  echo "watchdog_fires.sh: FAILED: want one whole timeout line from rank 0 naming rank 1; got $timeouts timeout line(s), $whole whole" >&2
  exit 1
fi
echo "watchdog_fires.sh: ok: one timeout line naming rank 1"
