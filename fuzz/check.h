/* SPDX-License-Identifier: MIT */
/*
 * What every fuzz target shares: libFuzzer's entry point, and the check
 * that turns a broken property into a crash libFuzzer keeps the input of.
 */
#ifndef VNIC_FUZZ_CHECK_H
#define VNIC_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A property the code under test broke: crash here, so libFuzzer keeps the
 * input. The check is named first: a replay (fuzz/replay.c) in a build
 * without sanitizers otherwise ends in a bare SIGILL that says nothing.
 */
static inline __attribute__((noreturn, cold)) void fz_fail(const char *what)
{
	fputs(what, stderr);
	__builtin_trap();
}

#define FZ_STR(x) #x
#define FZ_WHERE(line) __FILE__ ":" FZ_STR(line)
#define FZ_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fz_fail(FZ_WHERE(__LINE__) ": check failed: " #cond "\n");                \
	} while (0)

#endif /* VNIC_FUZZ_CHECK_H */
