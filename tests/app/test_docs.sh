#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The command's plumbing against the binary that was built: the manual page,
# the bash completion, --version and the install tree. No root needed.
#
#   test_docs.sh options    VNIC SRCDIR           every option of every --help is in vnic(1)
#   test_docs.sh render     VNIC SRCDIR           vnic(1) renders without a groff warning
#   test_docs.sh completion VNIC SRCDIR           the completion script, driven as bash would
#   test_docs.sh version    VNIC VERSION          vnic --version / vnic version
#   test_docs.sh script     CMAKE SCRIPT          cmake/VnicVersion.cmake in a scratch repository
#   test_docs.sh install    VNIC BUILDDIR CMAKE BINDIR MANDIR DATADIR
#                                                 cmake --install into a temporary prefix
#
# Exit status: 0 pass, 1 fail, 77 skipped (CTest SKIP_RETURN_CODE).
set -u

mode=${1:?mode}
vnic=${2:?vnic binary}
failures=0

fail()
{
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

finish()
{
	if ((failures)); then
		echo "$mode: $failures check(s) failed" >&2
		exit 1
	fi
	echo "$mode: ok"
	exit 0
}

# The commands `vnic help` lists (the indented words under "commands:").
commands()
{
	"$vnic" help | awk '/^commands:/ { in_cmds = 1; next }
		/^[^ ]/ { in_cmds = 0 }
		in_cmds && /^  [a-z]/ { print $1 }'
}

# The long options `vnic CMD --help` prints. Text in single quotes names
# another command's option ('vnic bench --name' in vnic stats --help) and is
# not one of CMD's. The completion script reads the help the same way.
help_options()
{
	"$vnic" "$1" --help | sed "s/'[^']*'//g" | grep -o -- '--[A-Za-z0-9][A-Za-z0-9-]*' | sort -u
}

# The subsection of vnic(1) for command CMD, as plain text: from
# `.SS "vnic CMD ...` to the next .SS or .SH, with roff's \- and font
# escapes undone so that an option reads as it is typed.
man_section()
{
	awk -v cmd="$1" '
		/^\.S[SH] / { in_sec = index($0, ".SS \"vnic " cmd " ") == 1 ||
				       index($0, ".SS \"vnic " cmd ",") == 1 ||
				       $0 == ".SS \"vnic " cmd "\"" }
		in_sec' "$man" |
		sed -e 's/\\-/-/g' -e 's/\\%//g' -e 's/\\f[BIRP]//g' -e 's/\\(lq\|\\(rq//g'
}

# A top-level section of vnic(1) (.SH "TITLE") as plain text, like man_section.
man_top_section()
{
	awk -v t="$1" '
		/^\.S[SH] / { in_sec = $0 == ".SH \"" t "\"" || $0 == ".SH " t }
		in_sec' "$man" |
		sed -e 's/\\-/-/g' -e 's/\\%//g' -e 's/\\f[BIRP]//g' -e 's/\\(lq\|\\(rq//g'
}

check_options()
{
	local cmd opt text n re

	for sec in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" FILES ENVIRONMENT EXAMPLES "SEE ALSO"; do
		grep -Eq "^\.SH \"?$sec\"?\$" "$man" || fail "vnic.1 has no $sec section"
	done
	for see in 'ethtool (8)' 'ip (8)' 'iperf3 (1)'; do
		grep -Fq ".BR $see" "$man" || fail "vnic.1 SEE ALSO lacks ${see/ /}"
	done
	for cmd in $(commands); do
		text=$(man_section "$cmd")
		# A command that takes the shared table says so, and the table's
		# options are documented once, in VNIC OPTIONS.
		if grep -q 'VNIC OPTIONS' <<<"$text"; then
			text+=$'\n'$(man_top_section 'VNIC OPTIONS')
		fi
		if [[ -z $text ]]; then
			fail "vnic.1 has no subsection '.SS \"vnic $cmd ...\"' for the command $cmd"
			continue
		fi
		[[ $cmd == help || $cmd == version ]] && continue
		n=0
		for opt in $(help_options "$cmd"); do
			n=$((n + 1))
			# grep -E's "${opt}([^A-Za-z0-9-]|$)" line by line, in bash:
			# a newline is one of the characters that may follow. A grep
			# per option is two hundred processes, and on a loaded machine
			# each waits its turn for a CPU.
			re="${opt}([^A-Za-z0-9-]|\$)"
			[[ $text =~ $re ]] ||
				fail "vnic $cmd --help prints $opt, its section of vnic.1 does not"
		done
		# A help that printed nothing would pass the loop above vacuously.
		# show and set take few options; the others a screenful.
		min=3
		[[ $cmd == show || $cmd == set ]] && min=1
		((n >= min)) || fail "vnic $cmd --help: only $n long options found"
	done
	# The options being documented ahead of their code must be in the
	# right sections too.
	for opt in link:--json link:--interval-json experiment:--json version:--version; do
		grep -Eq -- "${opt#*:}([^A-Za-z0-9-]|\$)" <<<"$(man_section "${opt%%:*}")" ||
			fail "vnic.1: ${opt#*:} missing from the ${opt%%:*} section"
	done
	# The parsing above must see a missing option: drop one and look.
	text=$(man_top_section 'VNIC OPTIONS')
	grep -Eq -- '--tx-submit([^A-Za-z0-9-]|$)' <<<"$text" ||
		fail "man_top_section: VNIC OPTIONS not found, or without --tx-submit"
	text=$(man_top_section 'VNIC OPTIONS' | grep -v -- '--tx-submit')
	grep -Eq -- '--tx-submit([^A-Za-z0-9-]|$)' <<<"$text" &&
		fail "man_section: cannot tell a missing option from a present one"
}

check_render()
{
	local out

	if ! command -v groff >/dev/null; then
		echo "SKIP: groff is not installed (Debian: groff-base; scripts/deps.sh test)" >&2
		exit 77
	fi
	# -ww: every warning; -z: format, print nothing. A warning is a failure.
	out=$(groff -man -Tutf8 -ww -z "$man" 2>&1) || fail "groff exited $?: $out"
	if [[ -n $out ]]; then
		fail "groff warns: $out"
	fi
	out=$(groff -man -Tutf8 "$man" 2>/dev/null | wc -l)
	((out > 200)) || fail "vnic.1 renders to $out lines only"
}

# Runs the completion as bash runs it for the words given, in a fresh
# non-interactive bash, with `vnic` found in PATH; prints COMPREPLY, one a line.
complete_words()
{
	bash --norc --noprofile -c '
		source "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		spec=$(complete -p vnic) || exit 1
		fn=${spec#*-F }
		fn=${fn%% *}
		"$fn" vnic "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$completion" "$@"
}

# expect "WORDS..." -- reply lines: the reply must be exactly those, in any order.
expect()
{
	local words=() want got
	while [[ $1 != -- ]]; do
		words+=("$1")
		shift
	done
	shift
	want=$(printf '%s\n' "$@" | sort)
	got=$(complete_words "${words[@]}" | sort)
	[[ $got == "$want" ]] ||
		fail "completing '${words[*]}': wanted [${want//$'\n'/ }], got [${got//$'\n'/ }]"
}

# The Ethernet interfaces of this namespace, loopback aside, sorted: what
# --backing offers. Errors are ignored: an interface may go between the
# listing and the read of its type.
backing_candidates()
{
	local i

	for i in /sys/class/net/*; do
		[[ $(<"$i/type") == 1 ]] 2>/dev/null || continue
		(($(<"$i/flags") & 0x8)) 2>/dev/null && continue
		echo "${i##*/}"
	done | sort
}

# `vnic link --backing <TAB>` offers exactly backing_candidates. Other tests
# (and other work on the machine) make and remove interfaces at any time:
# `vnic link` names its TAPs vnicPIDa and vnicPIDb in this namespace for the
# moment before it moves them, a backing test makes a veth pair. A try counts
# only when the interfaces were the same before and after the completion ran;
# one that saw them change is taken again. The completion reads nothing but
# the interfaces, so a wrong answer is wrong on every try and still fails.
check_backing_completion()
{
	local before after got i

	for ((i = 0; i < 50; i++)); do
		before=$(backing_candidates)
		got=$(complete_words vnic link --backing "" | sort)
		after=$(backing_candidates)
		[[ $before == "$after" && $got == "$before" ]] && return
		sleep 0.1
	done
	fail "completing 'vnic link --backing' (50 tries): wanted [${before//$'\n'/ }]," \
		"got [${got//$'\n'/ }], then [${after//$'\n'/ }] was there"
}

check_completion()
{
	local cmd want got pid i
	local -a words

	command -v bash >/dev/null || { echo "SKIP: no bash" >&2; exit 77; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/bin" "$tmp/run"
	ln -s "$(realpath "$vnic")" "$tmp/bin/vnic"
	export PATH="$tmp/bin:$PATH" XDG_RUNTIME_DIR="$tmp/run"

	bash --norc --noprofile -c 'source "$1" && complete -p vnic' _ "$completion" |
		grep -q -- '-F ' || fail "sourcing $completion registers no completion function for vnic"

	expect vnic be -- bench
	expect vnic bench rr --tx-su -- --tx-submit
	expect vnic ver -- version
	expect vnic --ver -- --version
	expect vnic bench "" -- rr stream
	expect vnic bench rr --tx-submit "" -- adaptive auto indirect
	expect vnic bench rr --tx-submit = ind -- indirect
	expect vnic bench stream --rx-deliver gro -- gro-list gro
	expect vnic link --threads "" -- 1 2
	expect vnic bench rr --mtu "" --
	expect vnic experiment re -- replenish reclaim
	expect vnic experiment all --out "$tmp/ru" -- "$tmp/run"
	# --backing offers the interfaces vnic link takes: Ethernet, not loopback
	check_backing_completion
	expect vnic link --backing lo --
	# Every command of `vnic help`, and exactly the options of each --help.
	mapfile -t words < <(commands)
	expect vnic "" -- "${words[@]}" --version --help
	for cmd in bench link stats experiment; do
		want=$( (help_options "$cmd"; echo --help) | sort -u)
		got=$(complete_words vnic "$cmd" -- | sort -u)
		[[ $got == "$want" ]] ||
			fail "vnic $cmd --<TAB> differs from vnic $cmd --help:" \
				"$(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
	done

	# Instance names come from the control sockets of running instances.
	"$vnic" bench rr --duration 3 --quiet --name comp-test >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		[[ -S $tmp/run/vnic/comp-test.sock ]] && break
		sleep 0.05
	done
	expect vnic stats co -- comp-test
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
}

check_version()
{
	local version=${3:?version} want out cmd

	# "vnic 0.1.0 (git 49c8a77)", "-dirty" after it, or "unknown".
	want="^vnic ${version//./\\.} \\(git ([0-9a-f]{7,40}(-dirty)?|unknown)\\)\$"
	for cmd in --version version; do
		out=$("$vnic" "$cmd") || fail "vnic $cmd exited $?"
		[[ $out =~ $want ]] || fail "vnic $cmd printed '$out', wanted /$want/"
		echo "vnic $cmd: $out"
	done
	[[ $("$vnic" --version) == "$("$vnic" version)" ]] || fail "--version and version differ"
	"$vnic" version extra >/dev/null 2>&1
	(($? == 2)) || fail "vnic version with an argument does not exit 2"
	"$vnic" help | grep -q '^  version ' || fail "vnic help does not list version"
}

# cmake/VnicVersion.cmake on its own, against a throw-away repository: what
# it names for a clean tree, a dirty one, a tree that is not a checkout (or
# only a folder inside someone else's), and that it leaves an unchanged
# output alone.
check_script()
{
	local cmake=${2:?cmake} script=${3:?script} git out hash mtime

	git=$(command -v git) || { echo "SKIP: git is not installed" >&2; exit 77; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	out=$tmp/version.c

	gen()
	{
		"$cmake" -DVNIC_SOURCE_DIR="$1" -DVNIC_VERSION=9.8.7 -DVNIC_OUT="$out" \
			-DGIT_EXECUTABLE="$git" "${@:2}" -P "$script"
	}
	# expect_commit DIR WANT [cmake -D...]: vnic_git_commit() must return WANT.
	expect_commit()
	{
		local dir=$1 want=$2

		gen "$dir" "${@:3}" || { fail "the script failed for $dir"; return; }
		grep -Fq "return \"$want\";" "$out" ||
			fail "for $dir ${*:3}: wanted commit '$want', got: $(grep -F 'return' "$out" | tr -d '\t\n')"
	}

	mkdir -p "$tmp/repo/sub" "$tmp/plain"
	git -C "$tmp/repo" init -q
	echo a >"$tmp/repo/sub/file"
	git -C "$tmp/repo" add sub/file
	git -C "$tmp/repo" -c user.name=t -c user.email=t@t commit -qm t
	hash=$(git -C "$tmp/repo" rev-parse --short=7 HEAD)

	expect_commit "$tmp/repo" "$hash"
	grep -Fq '"vnic 9.8.7 (git '"$hash"')"' "$out" || fail "no version string in $(cat "$out")"
	grep -Fq 'return "9.8.7";' "$out" || fail "vnic_version() is not the version given"
	echo new >"$tmp/repo/untracked"
	expect_commit "$tmp/repo" "$hash"
	echo b >"$tmp/repo/sub/file"
	expect_commit "$tmp/repo" "$hash-dirty"
	expect_commit "$tmp/plain" unknown
	expect_commit "$tmp/repo/sub" unknown
	expect_commit "$tmp/plain" 1234abc -DVNIC_GIT_COMMIT=1234abc
	gen "$tmp/plain" '-DVNIC_GIT_COMMIT=a"b' >/dev/null 2>&1 &&
		fail "a commit override with a quote was accepted"
	expect_commit "$tmp/repo" unknown -DGIT_EXECUTABLE=
	# Same text, same file: nothing downstream rebuilds.
	touch -d '2001-01-01' "$out"
	mtime=$(stat -c %Y "$out")
	gen "$tmp/plain"
	[[ $(stat -c %Y "$out") == "$mtime" ]] || fail "an unchanged output was rewritten"
}

check_install()
{
	local build=${3:?build dir} cmake=${4:?cmake} bindir=${5:?} mandir=${6:?} datadir=${7:?}
	local f files

	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	"$cmake" --install "$build" --prefix "$tmp/stage" >"$tmp/log" 2>&1 ||
		{ cat "$tmp/log" >&2; fail "cmake --install exited non-zero"; finish; }
	for f in "$bindir/vnic" "$mandir/man1/vnic.1" "$datadir/bash-completion/completions/vnic"; do
		[[ -f $tmp/stage/$f ]] || fail "not installed: $f"
	done
	[[ -x $tmp/stage/$bindir/vnic ]] || fail "$bindir/vnic is not executable"
	"$tmp/stage/$bindir/vnic" --version | grep -q '^vnic ' || fail "the installed vnic does not run"
	# No library, header or pkg-config file (docs/INSTALL.md says why).
	files=$(cd "$tmp/stage" && find . -type f | sort)
	[[ $(wc -l <<<"$files") -eq 3 ]] || fail "installed more than the three files: $files"
	cmp -s "$tmp/stage/$mandir/man1/vnic.1" "$src/docs/man/vnic.1" ||
		fail "the installed vnic.1 is not docs/man/vnic.1"
}

case $mode in
options | render | completion)
	src=${3:?source dir}
	man=$src/docs/man/vnic.1
	completion=$src/scripts/completion/vnic.bash
	;;
install)
	src=$(cd "$(dirname "$0")/../.." && pwd)
	;;
esac

case $mode in
options) check_options ;;
render) check_render ;;
completion) check_completion ;;
version) check_version "$@" ;;
script) check_script "$@" ;;
install) check_install "$@" ;;
*) echo "usage: $0 options|render|completion|version|script|install ..." >&2; exit 2 ;;
esac
finish
