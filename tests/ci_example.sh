#!/usr/bin/env bash
# The CI examples of docs/examples/ci (a GitHub Actions workflow and a GitLab CI job) run
# here as their CI would run them, so that they cannot rot (issue 36): their shell steps are
# read out of the YAML (python3-yaml) and run in order in a throw-away workspace holding a
# penumbra source tree (this checkout) and a scenarios folder (a mutant whose violation is
# expected, and its control). Each must install penumbra, find it on PATH, exit 0, and leave
# a JUnit file with both cases, an HTML report and the mutant's counterexample trace.
# usage: tests/ci_example.sh SOURCE_DIR   (slow: a Release build of penumbra, minutes)
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# steps FILE KIND: the file's shell steps, each a NUL-terminated script, in order
steps() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
out = []
if sys.argv[2] == "github":
    (job,) = doc["jobs"].values()
    env = "".join(f"export {k}={v!r}\n" for k, v in job.get("env", {}).items())
    out = [env + s["run"] for s in job["steps"] if "run" in s]
else:
    (job,) = [v for k, v in doc.items() if isinstance(v, dict) and "script" in v]
    env = "".join(f"export {k}={v!r}\n" for k, v in job.get("variables", {}).items())
    out = [env + "\n".join(job.get("before_script", []) + job["script"]) + "\n"]
sys.stdout.write("".join(s + "\0" for s in out))
PY
}

for kind in github gitlab; do
	file=$src/docs/examples/ci/$([ $kind = github ] && echo github-actions.yml || echo gitlab-ci.yml)
	ws=$work/$kind
	mkdir -p "$ws/crash-safety" "$ws/home"
	ln -s "$src" "$ws/penumbra"
	cp "$src/scenarios/mutants/ack-before-flush.yaml" \
		"$src/scenarios/mutants/ack-before-flush-control.yaml" "$ws/crash-safety/"
	: >"$ws/github_path"
	n=0
	while IFS= read -r -d '' script; do
		n=$((n + 1))
		# GitHub prepends the lines a step writes to $GITHUB_PATH to the next steps' PATH
		path=$(tac "$ws/github_path" | tr '\n' ':')$PATH
		if ! (cd "$ws" && HOME=$ws/home GITHUB_PATH=$ws/github_path PATH=$path \
			bash -e -o pipefail -c "$script") >"$ws/step$n.log" 2>&1; then
			echo "FAIL: $kind step $n exited non-zero:" >&2
			tail -20 "$ws/step$n.log" >&2
			exit 1
		fi
	done < <(steps "$file" $kind)
	[ "$n" -ge 1 ] || { echo "FAIL: $kind: no steps read from $file" >&2; exit 1; }
	[ -x "$ws/home/.local/bin/penumbra" ] || { echo "FAIL: $kind: penumbra not installed under HOME/.local" >&2; exit 1; }
	cases=$(grep -c '<testcase ' "$ws/penumbra.xml")
	fails=$(grep -c '<failure' "$ws/penumbra.xml" || true)
	[ "$cases" = 2 ] && [ "$fails" = 0 ] ||
		{ echo "FAIL: $kind: penumbra.xml has $cases cases and $fails failures; expected 2 and 0" >&2; exit 1; }
	[ -s "$ws/penumbra.html" ] && grep -q '<svg' "$ws/penumbra.html" ||
		{ echo "FAIL: $kind: no HTML report" >&2; exit 1; }
	[ -n "$(find "$ws/penumbra-traces" -name '*.yaml')" ] ||
		{ echo "FAIL: $kind: no counterexample trace kept" >&2; exit 1; }
	echo "ok: $kind: $n steps, penumbra installed and on PATH, 2 JUnit cases, report and trace kept"
done
