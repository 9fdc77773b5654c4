/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_check.h -- the one helper the fuzz targets share: CHECK(), an
 * assertion that stays on in every build type and names the failed
 * condition before it aborts, so that libFuzzer keeps the input as a
 * crash.  Only for the fuzz targets' own oracles (what a header
 * promises); the code under test never sees it.
 */
#ifndef TIERFS_FUZZ_CHECK_H
#define TIERFS_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                       \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: check failed: %s\n",      \
				__FILE__, __LINE__, #cond);               \
			abort();                                          \
		}                                                         \
	} while (0)

/* libFuzzer's entry point, declared for -Wmissing-prototypes */
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#endif /* TIERFS_FUZZ_CHECK_H */
