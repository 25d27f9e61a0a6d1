#!/usr/bin/env python3
"""strip_timings.py FILE [KEY...]: a check --json output without the keys that measure the
machine (seconds, seconds_to_violation, shrink_seconds, and "jobs": the processes that checked,
--jobs N or the CPUs without it), without its provenance ("penumbra":
the command line, which differs between the runs compared: --jobs 1 and --jobs N, under
mpirun or not) and the KEYs named, printed as indented JSON, so that two runs that must
agree but for their timings compare with diff (tests/jobs_same.sh, tests/cross_check.sh)."""
import json
import sys

TIMINGS = ("seconds", "seconds_to_violation", "shrink_seconds", "jobs", "penumbra") + tuple(sys.argv[2:])


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in TIMINGS}
    if isinstance(o, list):
        return [strip(x) for x in o]
    return o


json.dump(strip(json.load(open(sys.argv[1]))), sys.stdout, indent=1)
