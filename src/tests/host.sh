#!/usr/bin/env bash
# host.sh - committed captures without build-ids (pipe, zstd) read where
# nothing can check their files: whatever the capture says of its host,
# files under --symfs are used unverified with one warning per run that
# names their count (also in --stats, --explain and the JSON report), and
# a file whose segments cannot have made the recorded mappings is
# `[prog (not the recorded file)]` instead of wrong names.
#
# The captures' host names are rewritten (scripts/set-host.py) to one
# that is not this machine's, and to this machine's own: nothing here
# depends on the machine's host name or kernel.  The decision table for
# the recording host itself is src/tests/test-host.c's.
kfold=$1
src=$2
. "$src/src/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kf_hermetic "$tmp" || exit 1
fail=0

other=kf-not-this-host
[ "$(hostname)" = "$other" ] && other=kf-not-this-host-either
here_host=$(hostname)
here_rel=$(uname -r)

validate() {   # validate JSON_FILE
	python3 - "$src/docs/kfold-report.schema.json" "$1" <<'EOF'
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
EOF
}

for c in pipe zstd; do
	dir=$src/testdata/cases/$c
	kf_case "$dir"
	python3 "$src/scripts/set-host.py" --hostname "$other" --osrelease 9.9.9-other \
		"$dir/perf.data" "$tmp/$c.other" || exit 1
	python3 "$src/scripts/set-host.py" --hostname "$here_host" --osrelease "$here_rel" \
		"$dir/perf.data" "$tmp/$c.here" || exit 1

	f0=$fail
	# (a) the right files under --symfs: the names of expected.folded,
	# whoever the capture says recorded it, and one warning
	for v in other here; do
		"$kfold" "${KF_CASE[@]}" "$tmp/$c.$v" > "$tmp/$c.$v.out" 2> "$tmp/$c.$v.err" ||
			{ echo "FAIL $c.$v: exit $?"; fail=$((fail + 1)); continue; }
		if ! diff -u "$dir/expected.folded" "$tmp/$c.$v.out" > "$tmp/diff"; then
			echo "FAIL $c.$v: the right files under --symfs do not give expected.folded"
			head -20 "$tmp/diff"; fail=$((fail + 1))
		fi
		n=$(grep -c 'without a recorded build-id' "$tmp/$c.$v.err")
		if [ "$n" != 1 ] || ! grep -q '^kfold: warning: 2 files without a recorded build-id were used unverified (the file given under --symfs): their names are right only if they are the recorded files (--stats lists them)$' "$tmp/$c.$v.err"; then
			echo "FAIL $c.$v: want one warning naming 2 unverified files, got:"
			cat "$tmp/$c.$v.err"; fail=$((fail + 1))
		fi
		if grep -q 'changed since recording\|not the recorded file' "$tmp/$c.$v.out" "$tmp/$c.$v.err"; then
			echo "FAIL $c.$v: a file under --symfs was refused"; fail=$((fail + 1))
		fi
	done
	[ $fail = $f0 ] && echo "ok   $c: the recorded files under --symfs, capture host $other or this one: expected.folded, one warning"

	f0=$fail
	"$kfold" "${KF_CASE[@]}" --stats "$tmp/$c.other" 2> "$tmp/$c.stats" > /dev/null || fail=$((fail + 1))
	for m in /tmp/kfold-fx/bin/compute /usr/lib/x86_64-linux-gnu/libc.so.6; do
		grep -qF "kfold: module $m: symbols from a file, unverified: no build-id recorded; the file given under --symfs, from " "$tmp/$c.stats" ||
			{ echo "FAIL $c: --stats does not mark $m unverified"; cat "$tmp/$c.stats"; fail=$((fail + 1)); }
	done
	"$kfold" "${KF_CASE[@]}" --explain "$tmp/$c.other" > "$tmp/$c.explain" 2>/dev/null || fail=$((fail + 1))
	grep -qF '  symbols: 2 files without a recorded build-id were used unverified (the file given under --symfs)' "$tmp/$c.explain" ||
		{ echo "FAIL $c: --explain does not mention the unverified files"; cat "$tmp/$c.explain"; fail=$((fail + 1)); }
	"$kfold" "${KF_CASE[@]}" --format json -o "$tmp/$c.json" "$tmp/$c.other" 2> "$tmp/$c.json.err" || fail=$((fail + 1))
	validate "$tmp/$c.json" || { echo "FAIL $c: the report does not validate"; fail=$((fail + 1)); }
	python3 - "$tmp/$c.json" <<'EOF' || { echo "FAIL $c: JSON modules"; fail=$((fail + 1)); }
import json, sys
r = json.load(open(sys.argv[1]))
mods = {m["name"]: m for m in r["modules"]}
for name in ("/tmp/kfold-fx/bin/compute", "/usr/lib/x86_64-linux-gnu/libc.so.6"):
    m = mods[name]
    assert m["verified"] is False and m["verification"] == "unverified", m
    assert m["status"].startswith("symbols from a file, unverified: no build-id recorded"), m
assert any(n.startswith("2 files without a recorded build-id were used unverified") for n in r["notes"]), r["notes"]
EOF
	[ "$(grep -c 'without a recorded build-id' "$tmp/$c.json.err")" = 1 ] ||
		{ echo "FAIL $c: --format json: not one warning"; cat "$tmp/$c.json.err"; fail=$((fail + 1)); }
	[ $fail = $f0 ] && echo "ok   $c: --stats, --explain and the JSON report (valid) mark both files unverified"

	# (b) under --symfs, libc.so.6 at the program's recorded path: its
	# executable segment is not where the recorded mapping of the program
	# is (offset 0x1000 falls in libc's read-only first segment)
	f0=$fail
	bad=$tmp/$c.badcase
	rm -rf "$bad"
	mkdir -p "$bad/symfs/tmp/kfold-fx/bin" "$bad/symfs/usr/lib/x86_64-linux-gnu" \
		"$bad/symfs/usr/lib/debug/.build-id"
	sym=$(kf_symfs "$dir")
	cp "$sym/usr/lib/x86_64-linux-gnu/libc.so.6" "$bad/symfs/usr/lib/x86_64-linux-gnu/"
	cp "$sym/usr/lib/x86_64-linux-gnu/libc.so.6" "$bad/symfs/tmp/kfold-fx/bin/compute"
	cp -r "$sym/usr/lib/debug/.build-id/93" "$bad/symfs/usr/lib/debug/.build-id/"
	cp "$tmp/$c.other" "$bad/perf.data"
	kf_case "$bad"
	"$kfold" "${KF_CASE[@]}" "$bad/perf.data" > "$tmp/$c.bad.out" 2> "$tmp/$c.bad.err" ||
		{ echo "FAIL $c.bad: exit $?"; fail=$((fail + 1)); }
	grep -qF "kfold: warning: $bad/symfs/tmp/kfold-fx/bin/compute: not the recorded file: the recorded executable mapping is at an offset where the file has no executable segment (offset 0x1000), and no build-id was recorded: its symbols are not used" "$tmp/$c.bad.err" ||
		{ echo "FAIL $c.bad: no warning naming the file"; cat "$tmp/$c.bad.err"; fail=$((fail + 1)); }
	grep -q '^kfold: warning: 1 file without a recorded build-id was used unverified (the file given under --symfs)' "$tmp/$c.bad.err" ||
		{ echo "FAIL $c.bad: the count should be libc alone"; cat "$tmp/$c.bad.err"; fail=$((fail + 1)); }
	# every frame of the program is named as refused: the stacks from the
	# right files (--no-inline: an inline chain is one frame once its
	# DWARF is not used) with each function of the program replaced
	nm --defined-only "$(kf_symfs "$dir")/tmp/kfold-fx/bin/compute" |
		awk '$2 ~ /^[tTwW]$/ { print $3 }' > "$tmp/$c.funcs"
	kf_case "$dir"
	"$kfold" "${KF_CASE[@]}" --no-inline "$tmp/$c.other" 2>/dev/null |
		awk -v funcs="$tmp/$c.funcs" '
		BEGIN { while ((getline f < funcs) > 0) own[f] = 1 }
		{ n = split($1, fr, ";"); s = fr[1]
		  for (i = 2; i <= n; i++)
			s = s ";" (fr[i] in own ? "[compute (not the recorded file)]" : fr[i])
		  c[s] += $2 }
		END { for (s in c) print s, c[s] }' | LC_ALL=C sort > "$tmp/$c.bad.want"
	kf_case "$bad"
	"$kfold" "${KF_CASE[@]}" --no-inline "$bad/perf.data" > "$tmp/$c.bad.noinl" 2>/dev/null || fail=$((fail + 1))
	if ! grep -q 'not the recorded file' "$tmp/$c.bad.want"; then
		echo "FAIL $c.bad: no frame of the program in the capture?"; fail=$((fail + 1))
	elif ! diff -u "$tmp/$c.bad.want" "$tmp/$c.bad.noinl"; then
		echo "FAIL $c.bad: frames of the program not named as refused"; fail=$((fail + 1))
	fi
	cmp -s "$tmp/$c.bad.noinl" "$tmp/$c.bad.out" ||
		{ echo "FAIL $c.bad: inline expansion changed frames of a refused file"; fail=$((fail + 1)); }
	"$kfold" "${KF_CASE[@]}" --format json -o "$tmp/$c.bad.json" "$bad/perf.data" 2>/dev/null || fail=$((fail + 1))
	validate "$tmp/$c.bad.json" || { echo "FAIL $c.bad: the report does not validate"; fail=$((fail + 1)); }
	python3 - "$tmp/$c.bad.json" <<'EOF' || { echo "FAIL $c.bad: JSON"; fail=$((fail + 1)); }
import json, sys
r = json.load(open(sys.argv[1]))
m = {m["name"]: m for m in r["modules"]}["/tmp/kfold-fx/bin/compute"]
assert m["verified"] is False and m["verification"] == "refused", m
assert m["status"].startswith("not the recorded file"), m
assert m["symbols_from"] is None, m
EOF
	# --compat=perf uses the file, as perf does: its output is perf's
	"$kfold" "${KF_CASE[@]}" --compat=perf "$bad/perf.data" > "$tmp/$c.bad.compat" 2>/dev/null || fail=$((fail + 1))
	"$src/scripts/oracle.sh" "$bad" > "$tmp/$c.bad.perf" 2>/dev/null ||
		{ echo "FAIL $c.bad: the oracle failed"; fail=$((fail + 1)); }
	if ! diff -u "$tmp/$c.bad.perf" "$tmp/$c.bad.compat" > "$tmp/diff"; then
		echo "FAIL $c.bad: --compat=perf differs from perf on the wrong file"
		head -20 "$tmp/diff"; fail=$((fail + 1))
	fi
	[ $fail = $f0 ] && echo "ok   $c: another file at the program's path is [compute (not the recorded file)] ($(wc -l < "$tmp/$c.bad.out") stacks); --compat=perf names it as perf does"
done
exit $((fail > 0))
