/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * banned.h -- functions that are too easy to misuse.  Include it last in
 * every .c file; a use then fails to compile.  (The idea is git's.)
 */
#ifndef TIERFS_UTIL_BANNED_H
#define TIERFS_UTIL_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef gets
#define gets(x) BANNED(gets)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef atoi
#define atoi(x) BANNED(atoi)

#endif /* TIERFS_UTIL_BANNED_H */
