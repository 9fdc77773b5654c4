// SPDX-License-Identifier: GPL-2.0-or-later
/* tap.c -- see tap.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

int tap_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	TestResult **res;
	int n, failed = 0, skipped = 0;

	/* we print the TAP ourselves; Check's own would repeat every line */
	unsetenv("CK_TAP_LOG_FILE_NAME");
	srunner_run_all(sr, CK_SILENT);
	n = srunner_ntests_run(sr);
	res = srunner_results(sr);
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++) {
		TestResult *tr = res[i];
		const char *msg = tr_msg(tr) ? tr_msg(tr) : "";

		if (tr_rtype(tr) == CK_PASS) {
			printf("ok %d - %s\n", i + 1, tr_tcname(tr));
		} else if (!strncmp(msg, TAP_SKIP_PREFIX,
				    strlen(TAP_SKIP_PREFIX))) {
			printf("ok %d - %s # SKIP %s\n", i + 1, tr_tcname(tr),
			       msg + strlen(TAP_SKIP_PREFIX));
			skipped++;
		} else {
			printf("not ok %d - %s:%d: %s: %s\n", i + 1,
			       tr_lfile(tr) ? tr_lfile(tr) : "?", tr_lno(tr),
			       tr_tcname(tr), msg);
			failed++;
		}
	}
	free(res);
	srunner_free(sr);
	fflush(stdout);
	if (failed)
		return EXIT_FAILURE;
	return n > 0 && skipped == n ? 77 : EXIT_SUCCESS;
}
