// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mountinfo.c -- see mountinfo.h.
 */
#include <stdio.h>
#include <string.h>

#include "mountinfo.h"

void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
		    r[2] <= '7' && r[3] >= '0' && r[3] <= '7' &&
		    (r[1] != '0' || r[2] != '0' || r[3] != '0')) {
			*w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 |
				      (r[3] - '0'));
			r += 3;
		} else if (r[0] == '\\' && r[1] == '\\') {
			*w++ = '\\';
			r++;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

bool mountinfo_parse(char *line, struct mountinfo_entry *e)
{
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SRC SOPTS */
	char *field[6], *p = line, *sep;
	int i;

	for (i = 0; i < 6; i++) {
		field[i] = p;
		p = strchr(p, ' ');
		if (!p)
			return false;
		*p++ = '\0';
	}
	if (sscanf(field[2], "%u:%u", &e->dev_major, &e->dev_minor) != 2)
		return false;
	/* p: the optional fields and " - ", or "- " when there are none */
	if (!strncmp(p, "- ", 2)) {
		e->fstype = p + 2;
	} else {
		sep = strstr(p, " - ");
		if (!sep)
			return false;
		e->fstype = sep + 3;
	}
	/* after the type: the source and the superblock's options */
	sep = strchr(e->fstype, ' ');
	e->source = e->fstype + strlen(e->fstype); /* "" unless found */
	e->super_opts = e->source;
	if (sep) {
		*sep = '\0';
		e->source = sep + 1;
		sep = strchr(e->source, ' ');
		if (sep) {
			*sep = '\0';
			e->super_opts = sep + 1;
			e->super_opts[strcspn(e->super_opts, " \n")] = '\0';
		}
		unescape_octal(e->source);
	}
	unescape_octal(field[4]); /* octal escapes: \040 for a space */
	e->mountpoint = field[4];
	e->mount_opts = field[5];
	return true;
}
