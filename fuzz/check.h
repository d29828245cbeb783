/* SPDX-License-Identifier: MIT */
/*
 * What every fuzz target shares: libFuzzer's entry point, and the check
 * that turns a broken property into a crash libFuzzer keeps the input of.
 */
#ifndef VNIC_FUZZ_CHECK_H
#define VNIC_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the code under test broke: crash here, so libFuzzer keeps the input. */
#define FZ_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond))                                                                       \
			__builtin_trap();                                                          \
	} while (0)

#endif /* VNIC_FUZZ_CHECK_H */
