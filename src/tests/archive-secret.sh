#!/usr/bin/env bash
# archive-secret.sh KFOLD SRCDIR: `kfold archive --symbols-only` leaves a
# secret on a sampled stack out of the bundle and still names every frame.
# testdata/src/secret/secret.c (gcc -O2 -g) copies $KFOLD_SECRET (random per
# run; from the environment, not argv, which perf writes into the capture's
# header) into a buffer on its stack and spins a few frames deeper, so the
# 8 KiB user stack copy of each `--call-graph dwarf` sample holds it. It is
# recorded into a file and into a pipe (`-o -`), each also with -z, whose
# stack copies are compressed: the secret is looked for there in the
# capture as `kfold archive --redact` bundles it, inflated; and into
# `perf record --threads` directories, plain and -z. Asserted:
# - the secret is in each capture, once per sample (it is real: the test
#   is not vacuous), and not in what `kfold header` prints;
# - the full bundle holds it, the symbols-only bundle holds no 8-byte piece
#   of it, no ELF member (the full one does), its capture member has the
#   capture's size (zeroed in place; a -z one's inflated size), and it is
#   smaller than the full one;
# - with the program deleted, every fold mode, --stats, report, explain and
#   header of the symbols-only bundle equal the full bundle's (stdout,
#   stderr, exit status; --stats' work, bytes read and queue figures
#   masked where they measure reading another capture), the fold naming
#   main;hold;spin;churn;mix;
# - annotate and --compat=perf of the symbols-only bundle exit 2 saying
#   "symbols-only" (they need the binaries).
# Asserts about its own workload only.
set -uo pipefail
kfold=$(realpath "$1")
src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/live-lib.sh"
live_need perf gcc zstd tar jq od
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fail=0
nok=0
nfail=0
ok() { echo "ok   $*"; nok=$((nok + 1)); }
bad() { echo "FAIL $*"; fail=1; nfail=$((nfail + 1)); }

prog=$tmp/kfold-secret
gcc -std=gnu11 -O2 -g -o "$prog" "$src/testdata/src/secret/secret.c" || exit 1
cd "$tmp" || exit 1
# the call chain the samples must show, each a function of its own
for f in main hold spin churn mix; do
	nm "$prog" > syms || exit 1
	grep -Eq " [tT] $f(\.[a-z]+\.[0-9]+)?\$" syms ||
		{ echo "FAIL gcc inlined or renamed $f: the test proves nothing"; exit 1; }
done

secret=KFOLDSECRET-$(od -An -tx8 -N8 /dev/urandom | tr -d ' \n')
[ ${#secret} -eq 28 ] || { echo "FAIL no secret made: '$secret'"; exit 1; }
# every 8-byte piece of the secret (a register holding part of it, a stack
# copy cut in the middle): none may be in the symbols-only bundle
for ((i = 0; i + 8 <= ${#secret}; i++)); do
	printf '%s\n' "${secret:i:8}"
done > pieces
grep -q -a -F "$secret" "$prog" && { echo "FAIL the secret is in the binary"; exit 1; }

# record into a file and into a pipe; the secret only in the workload's
# environment (not exported to perf's command line or to kfold)
KFOLD_SECRET=$secret perf record -N -q -e cpu-clock -F 499 --call-graph dwarf,8192 \
	-o d.data -- "$prog" 0.2 2> rec.err ||
	skip "perf record --call-graph dwarf cannot run here: $(head -2 rec.err)"
KFOLD_SECRET=$secret perf record -N -q -e cpu-clock -F 499 --call-graph dwarf,8192 \
	-o - -- "$prog" 0.2 > p.data 2> rec.err ||
	skip "perf record -o - cannot run here: $(head -2 rec.err)"
# and with -z, where the stack copies are in compressed records
KFOLD_SECRET=$secret perf record -N -q -e cpu-clock -F 499 -z --call-graph dwarf,8192 \
	-o z.data -- "$prog" 0.2 2> rec.err ||
	skip "perf record -z cannot run here: $(head -2 rec.err)"
KFOLD_SECRET=$secret perf record -N -q -e cpu-clock -F 499 -z --call-graph dwarf,8192 \
	-o - -- "$prog" 0.2 > zp.data 2> rec.err ||
	skip "perf record -z -o - cannot run here: $(head -2 rec.err)"
# and into perf record --threads directories (data, data.N), -z too
caps="d p z zp"
for c in t tz; do
	zopt=()
	[ $c = tz ] && zopt=(-z)
	if KFOLD_SECRET=$secret perf record -N -q --threads "${zopt[@]}" -e cpu-clock -F 499 \
		--call-graph dwarf,8192 -o $c.data -- "$prog" 0.2 2> rec.err && [ -d $c.data ]; then
		caps="$caps $c"
	else
		echo "note: perf record --threads ${zopt[*]} cannot run here: $(head -1 rec.err)"
	fi
done
sym_ok=""
for c in $caps; do
	# the secret is in the capture, in the samples' stack copies; a -z
	# capture's are compressed, so it is looked for in the capture as
	# --redact bundles it, inflated (and only names masked)
	# (a directory's files, concatenated)
	view=$c.data
	[ -d $c.data ] && { cat $c.data/data $c.data/data.* > $c.view; view=$c.view; }
	case $c in z*|tz)
		"$kfold" archive -q --redact "$c.data" -o "$c.red.tar.zst" 2> "$c.red.err" ||
			bad "$c: kfold archive --redact: $(head -2 "$c.red.err")"
		raw=$(grep -o -a -F "$secret" "$view" | wc -l)
		tar --zstd -xOf "$c.red.tar.zst" --wildcards 'capture/*' > "$c.inflated"
		view=$c.inflated
		# (perf record --threads -z may leave a few records uncompressed)
		[ "$raw" -lt "$(grep -o -a -F "$secret" "$view" | wc -l)" ] ||
			bad "$c: the secret is as readable in the -z capture itself ($raw times): not a -z test"
	esac
	n=$(grep -o -a -F "$secret" "$view" | wc -l)
	samples=$("$kfold" report "$c.data" 2> /dev/null | jq -r '.capture.samples')
	if [ "$n" -ge 20 ] && [ "$samples" -gt 0 ] 2> /dev/null && [ $((2 * n)) -ge "$samples" ]; then
		ok "$c: the secret is in the capture $n times ($samples samples)"
	else
		bad "$c: the secret is in the capture $n times for $samples samples (want >= 20 and >= half)"
	fi
	"$kfold" header "$c.data" > "$c.header" 2> /dev/null
	if grep -q -a -F "$secret" "$c.header"; then
		bad "$c: the secret is in the capture's header: not a stack secret"
	else
		ok "$c: the secret is not in the capture's header"
	fi
	"$kfold" --srcline "$c.data" > "$c.before" 2> /dev/null

	# a full bundle and a symbols-only one (the pipe one read from stdin)
	for kind in full sym; do
		opt=()
		[ $kind = sym ] && opt=(--symbols-only)
		if [ "$c" = p ] || [ "$c" = zp ]; then
			"$kfold" archive -q "${opt[@]}" - -o "$c.$kind.tar.zst" < "$c.data" 2> "$c.$kind.arerr"
		else
			"$kfold" archive -q "${opt[@]}" "$c.data" -o "$c.$kind.tar.zst" 2> "$c.$kind.arerr"
		fi
		rc=$?
		if [ $rc -ne 0 ] || [ ! -s "$c.$kind.tar.zst" ]; then
			bad "$c: kfold archive${opt[*]:+ ${opt[*]}} exit $rc: $(head -3 "$c.$kind.arerr")"
			continue
		fi
		ok "$c: kfold archive${opt[*]:+ ${opt[*]}} wrote $(stat -c %s "$c.$kind.tar.zst") bytes"
		[ $kind = sym ] && sym_ok="$sym_ok $c"
	done
	[ -s "$c.full.tar.zst" ] || continue

	zstd -dc "$c.full.tar.zst" > "$c.full.tar" || bad "$c: zstd -dc of the full bundle failed"
	# (a -z capture is in its full bundle as recorded, compressed: the
	# control is the inflated copy above)
	case $c in z*|tz) cat "$c.inflated" >> "$c.full.tar" ;; esac
	n=$(grep -o -a -F "$secret" "$c.full.tar" | wc -l)
	if [ "$n" -gt 0 ] && grep -q -a -F -f pieces "$c.full.tar"; then
		ok "$c: the full bundle holds the secret ($n times)"
	else
		bad "$c: the full bundle does not hold the secret: the test proves nothing"
	fi
	# each member's first 4 bytes; the full bundle has ELF ones (control)
	nelf=0
	for m in $(tar --zstd -tf "$c.full.tar.zst"); do
		[ "$(tar --zstd -xOf "$c.full.tar.zst" "$m" | head -c4 | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] &&
			nelf=$((nelf + 1))
	done
	if [ $nelf -gt 0 ]; then
		ok "$c: the full bundle has $nelf ELF members"
	else
		bad "$c: the full bundle has no ELF member: the ELF check proves nothing"
	fi

	case " $sym_ok " in *" $c "*) ;; *) continue ;; esac
	zstd -dc "$c.sym.tar.zst" > "$c.sym.tar" || bad "$c: zstd -dc of the symbols-only bundle failed"
	if grep -q -a -F -f pieces "$c.sym.tar"; then
		bad "$c: the symbols-only bundle holds the secret or a piece of it:" \
			"$(grep -o -a -F -f pieces "$c.sym.tar" | sort | uniq -c | head -3 | tr '\n' ' ')"
	else
		ok "$c: the symbols-only bundle holds no 8-byte piece of the secret"
	fi
	members=$(tar --zstd -tf "$c.sym.tar.zst")
	elf=""
	for m in $members; do
		[ "$(tar --zstd -xOf "$c.sym.tar.zst" "$m" | head -c4 | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] &&
			elf="$elf $m"
	done
	if [ -z "$elf" ]; then
		ok "$c: the symbols-only bundle has no ELF member ($(wc -w <<< "$members") members)"
	else
		bad "$c: the symbols-only bundle has ELF members:$elf"
	fi
	# the capture zeroed in place: the same size (a -z one: the size of
	# its inflated copy)
	csize=$(tar --zstd -xOf "$c.sym.tar.zst" --wildcards 'capture/*' 2> /dev/null | wc -c)
	if [ "$csize" -eq "$(stat -c %s "$view")" ]; then
		ok "$c: the symbols-only bundle's capture member has the capture's $csize bytes"
	else
		bad "$c: the symbols-only bundle's capture member has $csize bytes, the capture $(stat -c %s "$view")"
	fi
	fs=$(stat -c %s "$c.full.tar.zst")
	ss=$(stat -c %s "$c.sym.tar.zst")
	if [ "$ss" -lt "$fs" ]; then
		ok "$c: the symbols-only bundle is smaller: $ss bytes, the full one $fs"
	else
		bad "$c: the symbols-only bundle is $ss bytes, the full one $fs"
	fi
done
rm -f "$prog"

# run NAME BUNDLE ARGS...: stdout, stderr and exit status into NAME.{out,err,rc}
run() {
	local name=$1 b=$2
	shift 2
	"$kfold" "$@" "$b" < /dev/null > "$name.out" 2> "$name.err"
	echo $? > "$name.rc"
}

for c in $caps; do
	[ -s "$c.full.tar.zst" ] || continue
	# the full bundle after the deletion is the capture before it (control)
	run "$c.full.srcline" "$c.full.tar.zst" --srcline
	if cmp -s "$c.before" "$c.full.srcline.out" && grep -q ';hold:.*secret\.c:[0-9]' "$c.before"; then
		ok "$c: the full bundle gives the capture's --srcline stacks after the deletion"
	else
		bad "$c: the full bundle's --srcline stacks differ from the capture's before the deletion"
		diff "$c.before" "$c.full.srcline.out" | head -5
	fi
	"$kfold" "$c.data" > "$c.gone" 2> /dev/null
	if grep -q ';hold' "$c.gone"; then
		bad "$c: the capture still names the deleted program: the test proves nothing"
	fi

	case " $sym_ok " in
	*" $c "*) ;;
	*) bad "$c: no symbols-only bundle: reading it not checked"; continue ;;
	esac
	i=0
	while IFS='|' read -r mode args; do
		i=$((i + 1))
		read -ra a <<< "$args"
		run "$c.$i.full" "$c.full.tar.zst" "${a[@]}"
		run "$c.$i.sym" "$c.sym.tar.zst" "${a[@]}"
		what="$c: $mode"
		if [ "$(cat "$c.$i.sym.rc")" != "$(cat "$c.$i.full.rc")" ]; then
			bad "$what: exit $(cat "$c.$i.sym.rc"), the full bundle's $(cat "$c.$i.full.rc"): $(head -2 "$c.$i.sym.err")"
			continue
		fi
		if [ "$(cat "$c.$i.full.rc")" != 0 ]; then
			bad "$what: exit $(cat "$c.$i.full.rc") on the full bundle: $(head -2 "$c.$i.full.err")"
			continue
		fi
		# --stats' "work N steps" counts the steps this run took, and
		# a symbols-only bundle's unwinds were done on the capture host
		# (its samples carry no stack to unwind): that figure alone may
		# differ, and is masked
		sed -i -E 's/, work [0-9]+ steps$/, work N steps/' "$c.$i.full.err" "$c.$i.sym.err"
		# a -z capture is in a symbols-only bundle inflated: the bytes
		# read and the ordering queue's peak are those of reading that
		if [ "$c" != "${c#z}" ] || [ "$c" = tz ]; then
			sed -i -E 's/^kfold: bytes read [0-9]+, ordering queue peak [0-9]+ bytes/kfold: bytes read N, ordering queue peak N bytes/' \
				"$c.$i.full.err" "$c.$i.sym.err"
		fi
		if ! cmp -s "$c.$i.full.err" "$c.$i.sym.err"; then
			bad "$what: stderr differs from the full bundle's:"
			diff "$c.$i.full.err" "$c.$i.sym.err" | head -6
			continue
		fi
		if cmp -s "$c.$i.full.out" "$c.$i.sym.out"; then
			same="byte for byte"
		elif [ "$mode" = report ] &&
		     cmp -s <(jq -S 'del(.modules[].symbols_from, .modules[].debuginfo_from)' "$c.$i.full.out") \
			    <(jq -S 'del(.modules[].symbols_from, .modules[].debuginfo_from)' "$c.$i.sym.out"); then
			# the report may name where a module's names and debug info
			# came from (modules[].symbols_from, .debuginfo_from): the
			# symbols-only bundle has a name table, not the files
			same="but modules[].symbols_from and .debuginfo_from: $(jq -c '[.modules[] | .symbols_from]' "$c.$i.sym.out" | head -c 120)"
		else
			bad "$what: stdout differs from the full bundle's:"
			diff "$c.$i.full.out" "$c.$i.sym.out" | head -6
			continue
		fi
		# the stacks name the program's functions
		case $mode in
		fold*)
			if ! grep -Eq ';main(:[^;]*)?;hold(:[^;]*)?;spin(:[^;]*)?;churn(:[^;]*)?;mix(:[^;]*)? [0-9]+$' "$c.$i.sym.out"; then
				bad "$what: the stacks lack main;hold;spin;churn;mix"
				continue
			fi ;;
		report)
			if ! jq -e '[.stacks[].frames | join(";")] | any(test(";main;hold;spin;churn;mix$"))' \
				"$c.$i.sym.out" > /dev/null; then
				bad "$what: the report's stacks lack main;hold;spin;churn;mix"
				continue
			fi ;;
		esac
		ok "$what: the symbols-only bundle's equals the full bundle's ($same; $(wc -l < "$c.$i.sym.out") lines)"
	done <<- 'EOF'
	fold|
	fold --no-inline|--no-inline
	fold --srcline|--srcline
	fold --no-inline --srcline|--no-inline --srcline
	fold --context|--context
	fold --context=verdict|--context=verdict
	fold --pid --samples|--pid --samples
	fold --stats|--stats
	report|report
	explain|explain
	header|header
	EOF

	# what needs the binaries is refused, saying why
	for cmd in annotate --compat=perf; do
		run "$c.refused" "$c.sym.tar.zst" $cmd
		rc=$(cat "$c.refused.rc")
		if [ "$rc" = 2 ] && grep -q 'symbols-only' "$c.refused.err"; then
			ok "$c: $cmd on the symbols-only bundle: exit 2, $(head -1 "$c.refused.err" | head -c 100)"
		else
			bad "$c: $cmd on the symbols-only bundle: exit $rc (want 2 and \"symbols-only\"): $(head -2 "$c.refused.err")"
		fi
		run "$c.control" "$c.full.tar.zst" $cmd
		[ "$(cat "$c.control.rc")" = 0 ] ||
			bad "$c: $cmd on the full bundle: exit $(cat "$c.control.rc"): $(head -2 "$c.control.err")"
	done
done
echo "$nok checks passed, $nfail failed"
exit $fail
