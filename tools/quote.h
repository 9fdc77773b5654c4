/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quote.h -- file names made safe for a terminal and for line-oriented
 * output, the way `ls -b` (--quoting-style=escape) shows them.
 *
 * A file name may hold any byte but '/' and NUL: a newline splits one
 * output line into two, and an ESC starts a control sequence the
 * terminal obeys.  Every file name or path tierctl prints in its text
 * output and its messages goes through quote_name() first; JSON and
 * Prometheus output keep their own escaping (json.h, prom_label()).
 *
 * The contract of the escaped form:
 *   - printable ASCII, and well-formed UTF-8 above U+009F, as is;
 *   - a backslash as \\, so the escaped form reads back unambiguously;
 *   - \a \b \t \n \v \f \r as those C escapes;
 *   - every other byte that is a control character (0x00-0x1f, 0x7f),
 *     part of a C1 control (U+0080..U+009F, which some terminals obey
 *     in UTF-8) or not part of well-formed UTF-8, as a three-digit
 *     octal escape: ESC is \033, 0xff is \377.
 * Spaces and quotes are left alone: the names appear inside '...' or
 * as the last field of a line, and are for people to read.
 */
#ifndef TIERCTL_QUOTE_H
#define TIERCTL_QUOTE_H

#include <stddef.h>

/*
 * utf8_seq_len() - length of the well-formed UTF-8 sequence at @s (at
 * most @n bytes, @n >= 1), or 0 when it is not one: overlong forms,
 * surrogates and code points above U+10FFFF are refused (RFC 3629).
 * An ASCII byte is a sequence of length 1.
 */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* The length of quote_name(@s), without the NUL. */
size_t quote_name_len(const char *s);

/*
 * quote_name() - @s escaped as described above
 * Return: a malloc'd string the caller frees, or NULL (ENOMEM).
 */
char *quote_name(const char *s);

/*
 * qn() - quote_name() for use inside one printf() call: the result
 * stays valid until QN_SLOTS more calls of qn(), and is freed by a
 * later call, never by the caller.  Not thread-safe (tierctl prints
 * from its main thread only).  On ENOMEM it returns a fixed text.
 */
#define QN_SLOTS 8
const char *qn(const char *s);

#endif /* TIERCTL_QUOTE_H */
