# bash completion for vnic(1)                                  -*- shell-script -*-
# SPDX-License-Identifier: MIT
#
# Installed as share/bash-completion/completions/vnic (bash-completion loads it
# the first time `vnic` is completed); or, by hand: source scripts/completion/vnic.bash
#
# Nothing here lists vnic's commands or options: they are read at completion
# time from the help of the binary being completed (`vnic help`, `vnic COMMAND
# --help`), so the completion cannot drift from the binary, a build tree's
# included. In that help, an option followed by one space and an upper-case
# word (--mtu N, --pcap FILE) takes a value, and one followed by a|b|c takes
# one of those values. Text in single quotes names another command's options
# ('vnic bench --name' in vnic stats --help) and is skipped.
#
# Needs only bash; works with or without the bash-completion package.

# The help of COMMAND (empty: the top-level help) of the binary $1.
_vnic_help()
{
	local bin=$1 cmd=$2

	if [[ -z $cmd ]]; then
		"$bin" help 2>/dev/null
	else
		"$bin" "$cmd" --help 2>/dev/null
	fi
}

# Reads `vnic COMMAND --help` into the caller's variables: opts (every long
# option, --help included), argopt[OPT]=1 for the options that take a value,
# choices[OPT]="a b c", and pos, the literal choices of the first positional
# argument of the usage line (bench: "rr stream"; experiment: "all list").
_vnic_parse_help()
{
	local bin=$1 cmd=$2 line rest opt val alt
	local -a alts
	local -A seen=([--help]=1)
	local re_opt='(^|[^A-Za-z0-9-])(--[A-Za-z0-9][A-Za-z0-9-]*)( [^ ,-][^ ,]*)?(.*)$'
	local re_quoted="^(.*)'[^']*'(.*)$"
	local re_usage="^usage: +[^ ]+ +$cmd +([^ ]*[|][^ ]*)"

	opts=(--help)
	pos=()
	while IFS= read -r line; do
		if [[ $line =~ $re_usage ]]; then
			IFS='|' read -ra alts <<<"${BASH_REMATCH[1]}"
			for alt in "${alts[@]}"; do
				[[ $alt =~ ^[a-z][a-z0-9-]*$ ]] && pos+=("$alt")
			done
		fi
		while [[ $line =~ $re_quoted ]]; do
			line="${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
		done
		rest=$line
		while [[ $rest =~ $re_opt ]]; do
			opt=${BASH_REMATCH[2]}
			val=${BASH_REMATCH[3]# }
			rest=${BASH_REMATCH[4]}
			[[ -z ${seen[$opt]} ]] && opts+=("$opt")
			seen[$opt]=1
			if [[ $val == *'|'* ]]; then
				argopt[$opt]=1
				choices[$opt]=${val//|/ }
			elif [[ $val =~ ^[A-Z] ]]; then
				argopt[$opt]=1
			fi
		done
	done < <(_vnic_help "$bin" "$cmd")
}

# The commands of `vnic help` (the indented words under "commands:"), and
# the options of its "options:" section.
_vnic_commands()
{
	local bin=$1 line section=

	while IFS= read -r line; do
		case $line in
		commands:) section=cmd ;;
		options:) section=opt ;;
		[!\ ]*) section= ;;
		esac
		if [[ $section == cmd && $line =~ ^\ \ ([a-z][a-z0-9-]*) ]]; then
			printf '%s\n' "${BASH_REMATCH[1]}"
		elif [[ $section == opt && $line =~ ^\ \ (--[a-z][a-z0-9-]*) ]]; then
			printf '%s\n' "${BASH_REMATCH[1]}"
		fi
	done < <(_vnic_help "$bin" "")
	printf '%s\n' --help
}

# Instance names for `vnic stats`: the control sockets in the directory vnic
# uses ($XDG_RUNTIME_DIR/vnic), and in /run/vnic, where an instance started
# with sudo puts its socket (that directory is 0700: only root lists it).
_vnic_instances()
{
	local dir f

	for dir in ${XDG_RUNTIME_DIR:+"$XDG_RUNTIME_DIR/vnic"} /run/vnic; do
		for f in "$dir"/*.sock; do
			[[ -S $f ]] || continue
			f=${f##*/}
			printf '%s\n' "${f%.sock}"
		done
	done
}

_vnic_reply()
{
	local cur=$1 word
	shift
	COMPREPLY=()
	while IFS= read -r word; do
		[[ -n $word ]] && COMPREPLY+=("$word")
	done < <(compgen -W "$*" -- "$cur")
}

# Completes the value of option $opt of command $cmd.
_vnic_value()
{
	local opt=$1 cur=$2 word

	if [[ -n ${choices[$opt]} ]]; then
		_vnic_reply "$cur" "${choices[$opt]}"
		return
	fi
	COMPREPLY=()
	case $opt in
	--pcap | --samples | --md | --link-base | --listen | --server)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	--out)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		;;
	--backing)
		# What vnic link takes: Ethernet (type 1), not loopback (IFF_LOOPBACK, 0x8)
		for word in /sys/class/net/*; do
			[[ $(<"$word/type") == 1 ]] 2>/dev/null || continue
			(($(<"$word/flags") & 0x8)) 2>/dev/null && continue
			COMPREPLY+=("${word##*/}")
		done
		_vnic_reply "$cur" "${COMPREPLY[*]}"
		;;
	--ns-a | --ns-b)
		# `ip netns list` prints "NAME" or "NAME (id: N)"
		_vnic_reply "$cur" "$(ip netns list 2>/dev/null | while read -r word _; do
			printf '%s\n' "$word"
		done)"
		;;
	esac
}

_vnic()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' bin=${COMP_WORDS[0]} cmd='' cmd_at=0 i word
	local -a opts pos
	local -A argopt choices

	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	[[ $bin == \~/* ]] && bin=$HOME/${bin#\~/}

	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} != -* ]]; then
			cmd=${COMP_WORDS[i]}
			cmd_at=$i
			break
		fi
	done
	if [[ -z $cmd ]]; then
		_vnic_reply "$cur" "$(_vnic_commands "$bin")"
		return 0
	fi
	case $cmd in
	help | version) COMPREPLY=(); return 0 ;;
	esac

	_vnic_parse_help "$bin" "$cmd"

	# --opt=value: COMP_WORDBREAKS usually splits it into --opt, =, value.
	if [[ $cur == = ]]; then
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	fi
	if [[ -n ${argopt[$prev]} ]]; then
		_vnic_value "$prev" "$cur"
		return 0
	fi
	if [[ $cur == -* ]]; then
		_vnic_reply "$cur" "${opts[*]}"
		return 0
	fi

	# A positional argument: the first one after the command only (skipping
	# options and their values: --mtu 9000, or --mtu=9000 split at "=").
	# Past it, or for a command without one, the options.
	for ((i = cmd_at + 1; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		prev=${COMP_WORDS[i - 1]}
		[[ $word == -* || $word == = || $prev == = || -n ${argopt[$prev]} ]] && continue
		_vnic_reply "$cur" "${opts[*]}"
		return 0
	done
	case $cmd in
	experiment)
		_vnic_reply "$cur" "${pos[*]} $("$bin" experiment list 2>/dev/null)"
		;;
	stats)
		_vnic_reply "$cur" "$(_vnic_instances)"
		;;
	*)
		((${#pos[@]})) || pos=("${opts[@]}")
		_vnic_reply "$cur" "${pos[*]}"
		;;
	esac
	return 0
}

complete -F _vnic vnic
