#!/usr/bin/env bash
# golden.sh KFOLD SRCDIR: every committed capture, both modes.
#
#  --compat=perf --no-inline  must equal CASE/expected.folded, the hermetic
#                             `perf script | stackcollapse` oracle
#                             (scripts/oracle.sh) saved when it was recorded;
#  default mode               must equal the oracle with the case's
#                             documented corrections applied
#                             (scripts/derive-default.py CASE).
set -euo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"
fail=0
n=0
for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	# the case's own symfs and perf maps, and its args, where it has them
	kf_case "$dir"
	args=()
	common=(-q "${KF_CASE[@]}" --no-inline)
	"$kfold" "${common[@]}" --compat=perf ${args[@]+"${args[@]}"} \
		"$dir/perf.data" > "$tmp/$name.compat" || { echo "FAIL $name: kfold --compat=perf exited $?"; fail=1; continue; }
	if ! diff -u "$dir/expected.folded" "$tmp/$name.compat" > "$tmp/$name.diff"; then
		echo "FAIL $name: --compat=perf differs from the perf oracle:"
		head -20 "$tmp/$name.diff"
		fail=1
	fi
	# a case whose default output perf cannot give (perf does not unwind
	# it at all) says which test checks it instead
	if grep -q '^no-oracle' "$dir/corrections" 2>/dev/null; then
		echo "note $name: default output checked by $(grep '^no-oracle' "$dir/corrections" | cut -f2)"
		n=$((n + 1))
		continue
	fi
	python3 "$src/scripts/derive-default.py" "$dir" > "$tmp/$name.want"
	"$kfold" "${common[@]}" ${args[@]+"${args[@]}"} "$dir/perf.data" \
		> "$tmp/$name.default" || { echo "FAIL $name: kfold exited $?"; fail=1; continue; }
	if ! diff -u "$tmp/$name.want" "$tmp/$name.default" > "$tmp/$name.diff2"; then
		echo "FAIL $name: default output differs from oracle + corrections:"
		head -20 "$tmp/$name.diff2"
		fail=1
	fi
	# with inline expansion (frames that are several folded frames, so
	# folded.c's piece trie): sorted as perl's sort sorts whole
	# lines, each stack once, the same roots and total weight
	"$kfold" "${common[@]}" --inline ${args[@]+"${args[@]}"} "$dir/perf.data" \
		> "$tmp/$name.inl" 2>/dev/null || { echo "FAIL $name: kfold --inline exited $?"; fail=1; }
	if ! LC_ALL=C sort -c -u "$tmp/$name.inl" 2>/dev/null ||
	   [ "$(awk '{ s += $NF } END { print s + 0 }' "$tmp/$name.inl")" != \
	     "$(awk '{ s += $NF } END { print s + 0 }' "$tmp/$name.default")" ] ||
	   ! cmp -s <(cut -d';' -f1 "$tmp/$name.inl" | cut -d' ' -f1 | sort -u) \
		    <(cut -d';' -f1 "$tmp/$name.default" | cut -d' ' -f1 | sort -u); then
		echo "FAIL $name: the inline-expanded output is not sorted, not unique, or lost weight or roots"
		fail=1
	fi
	# variants: CASE/variants lines "NAME|kfold args|perf script args|collapse args[|MODE]",
	# each with CASE/expected.NAME.folded from scripts/oracle.sh; MODE
	# default-only: --compat=perf is not compared (it does not do what the
	# variant tests); compat-only: the default mode is not (perf's output
	# for the variant is what --compat=perf must give; the default mode's
	# is checked elsewhere, e.g. the inline test); perf-wrong: neither
	# (the case's README says why and which test checks kfold instead)
	if [ -f "$dir/variants" ]; then
		while IFS='|' read -r vname kargs _pargs _cargs mode; do
			[ -n "$vname" ] || continue
			read -r -a vargs <<< "$kargs"
			"$kfold" "${common[@]}" --compat=perf ${args[@]+"${args[@]}"} "${vargs[@]}" \
				"$dir/perf.data" > "$tmp/$name.$vname.compat" || fail=1
			if [ "$mode" = perf-wrong ]; then
				echo "note $name $vname: perf is wrong here, see $name/README"
				n=$((n + 1))
				continue
			fi
			if [ "$mode" = default-only ]; then
				:
			elif ! diff -u "$dir/expected.$vname.folded" "$tmp/$name.$vname.compat" > "$tmp/d"; then
				echo "FAIL $name $vname: --compat=perf differs from the perf oracle:"
				head -20 "$tmp/d"
				fail=1
			fi
			if [ "$mode" = compat-only ]; then
				n=$((n + 1))
				continue
			fi
			python3 "$src/scripts/derive-default.py" "$dir" "$vname" > "$tmp/$name.$vname.want"
			"$kfold" "${common[@]}" ${args[@]+"${args[@]}"} "${vargs[@]}" \
				"$dir/perf.data" > "$tmp/$name.$vname.default" || fail=1
			if ! diff -u "$tmp/$name.$vname.want" "$tmp/$name.$vname.default" > "$tmp/d"; then
				echo "FAIL $name $vname: default differs from oracle + corrections:"
				head -20 "$tmp/d"
				fail=1
			fi
			n=$((n + 1))
		done < "$dir/variants"
	fi
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no cases found"; exit 1; }
echo "$n cases and variants checked"
exit $fail
