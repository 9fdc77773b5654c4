// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tierctl.c -- the tierfs admin CLI: the command table and help.
 *
 * Shape of ndctl and git builtins: main() finds argv[1] in cmds[] and
 * calls its function with argv shifted so that argv[0] is the verb.  A
 * command parses its own options with getopt_long and returns the exit
 * status.  Everything reaches the daemon through extended attributes on
 * the mount (fs/ctl_proto.h); there is no socket.
 *
 * Nothing below calls back into this file: the commands report errors
 * through output.c, which finds a verb's usage line through the lookup
 * main() hands it (tierctl_usage_lookup()).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "banned.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;   /* after "tierctl " */
	const char *summary; /* one line for --help */
	const char *help;    /* the rest of "tierctl help VERB" */
};

static const struct cmd cmds[] = {
	{ "status", cmd_status, "status [--json [--compact]] [MOUNT...]",
	  "per-tier table of every tierfs mount, or of each MOUNT",
	  "For each tier: kind, backing path, size, used and free space, use,\n"
	  "extents, bytes read and written, read share, and the extents promoted\n"
	  "into and demoted out of it.  The read share (READ%) of a tier is its\n"
	  "share of the bytes read from all tiers of the mount: read bytes of the\n"
	  "tier divided by the sum over all tiers (\"-\" while nothing was read);\n"
	  "it is no hit ratio.  A drained tier is marked with \"*\".\n"
	  "Without MOUNT, every mount of type fuse.tierfs in /proc/self/mountinfo\n"
	  "is listed.  MOUNT may be any path inside a mount.  A dead mount (its\n"
	  "daemon killed) is named on stderr with the 'umount -l' that clears it.\n"
	  "  -j, --json    one JSON document of every mount; field names in tierctl(8)\n"
	  "  -c, --compact JSON on one line\n" },
	{ "stats", cmd_stats,
	  "stats [--json [--compact] | --prometheus] [MOUNT...]",
	  "counters as text, JSON or Prometheus exposition format",
	  "  (default)     one \"NAME VALUE\" line per counter, e.g.\n"
	  "                tier.ram.read_bytes 4096\n"
	  "  -j, --json    one JSON document (exactly one MOUNT); field names are\n"
	  "                documented in tierctl(8) and stay stable\n"
	  "  -c, --compact JSON on one line\n"
	  "  -p, --prometheus\n"
	  "                text exposition format for node_exporter's textfile\n"
	  "                collector; metric names tierfs_*, labels mount and tier;\n"
	  "                tierfs_up{mount} is 0 for a mount that does not answer\n"
	  "                (the others are still exported, exit status 0)\n"
	  "Without MOUNT (text and Prometheus), every tierfs mount is reported.\n" },
	{ "top", cmd_top, "top [-n COUNT | --once] [-d SECONDS] [MOUNT...]",
	  "live per-tier I/O and migration rates",
	  "Takes two samples of the counters a second apart and shows the rates,\n"
	  "refreshed every second until interrupted (Ctrl-C, or q on a terminal).\n"
	  "Without MOUNT, every tierfs mount, one after the other.\n"
	  "  -n, --iterations COUNT  stop after COUNT screens\n"
	  "  -1, --once              one screen, no terminal control sequences\n"
	  "  -d, --delay SECONDS     time between samples (default 1)\n" },
	{ "layout", cmd_layout, "layout [--json [--compact]] FILE...",
	  "extent runs of each FILE and the tier that holds them",
	  "Like filefrag -v: logical byte ranges merged into runs of whole extents\n"
	  "on one tier, then the bytes each tier holds for the file (whole\n"
	  "allocation units, 4K with 1M extents).  For a directory, the totals\n"
	  "of everything below it.\n"
	  "  -j, --json    one JSON document; field names in tierctl(8)\n"
	  "  -c, --compact JSON on one line\n" },
	{ "policy", cmd_policy,
	  "policy get PATH [KEY...] | set PATH KEY=VALUE... | unset PATH [KEY...]",
	  "show or change the placement policy of a file or directory",
	  "KEY is one of\n"
	  "  tiers=NAME[,NAME...]      allowed tiers, in preference order\n"
	  "  pin=NAME                  place on this tier and never migrate\n"
	  "  split=NAME:SIZE,...,NAME  byte ranges of each file on each tier\n"
	  "  promote=0|1               whether hot data may move up\n"
	  "get shows the policy in force and where each value comes from; unset\n"
	  "without KEY removes all four.  Only the owner or root may change it.\n" },
	{ "pin", cmd_pin, "pin PATH TIER",
	  "keep PATH on TIER (policy set PATH pin=TIER)",
	  "Sets user.tierfs.pin: data of PATH (and, for a directory, below it)\n"
	  "is placed on TIER and never migrated.  Existing extents stay where\n"
	  "they are until moved: see migrate.\n" },
	{ "unpin", cmd_unpin, "unpin PATH", "remove the pin of PATH",
	  "Removes user.tierfs.pin from PATH.  Not an error when none is set.\n" },
	{ "migrate", cmd_migrate, "migrate [-q] PATH... TIER",
	  "move the data of files (directories recursively) to TIER now",
	  "Moves the extents of each file in requests of up to 64 extents\n"
	  "(256M) and shows a progress bar on a terminal, plain progress lines\n"
	  "otherwise.\n"
	  "  -q, --quiet   no progress output\n" },
	{ "drain", cmd_drain,
	  "drain [-q] MOUNT TIER | drain --undo MOUNT [TIER] | drain MOUNT -",
	  "move everything off TIER and keep new data away (root only)",
	  "Stops placing new data on TIER and moves its extents to the other\n"
	  "tiers, showing how much is left; returns when TIER is empty.  The tier\n"
	  "stays drained (no new data) until drain --undo, or drain MOUNT -.\n"
	  "Interrupting tierctl does not stop the daemon's drain.\n"
	  "  -u, --undo    end draining: TIER takes new data again\n"
	  "  -q, --quiet   no progress output\n" },
	{ "scrub", cmd_scrub, "scrub [-q] MOUNT",
	  "read back every extent below MOUNT and check its checksums",
	  "Walks every regular file below MOUNT (without crossing into other\n"
	  "mounts), reads user.tierfs.verify of each, and ends with\n"
	  "\"checked N extents in M files, E errors\".  Exit status 1 when any\n"
	  "extent failed its check or a file could not be verified.\n"
	  "  -q, --quiet   no progress output\n" },
	{ "quota", cmd_quota,
	  "quota [--json [--compact]] [DIR...] | quota set DIR QUOTA|none",
	  "use against limits of the quotas that apply to each DIR; set one",
	  "For each DIR (default: the current directory), every quota above it,\n"
	  "innermost first: the quota's directory, then bytes used of the total\n"
	  "and of each tier against their limits, then what the files below it\n"
	  "did since it was set: peak use, bytes written, spilled below the\n"
	  "first tier and read (reads that reached tierfs: page cache hits are\n"
	  "not seen), failed writebacks.  Any user may look; no quota is not an\n"
	  "error.\n"
	  "  -j, --json    one JSON document; field names in tierctl(8)\n"
	  "  -c, --compact JSON on one line\n"
	  "quota set (root only) stores QUOTA as trusted.tierfs.quota of DIR:\n"
	  "SIZE (200G) or KEY:SIZE,... with KEY total, inodes or a tier\n"
	  "(ram:4G,total:200G,inodes:1M); none removes it.\n" },
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

/* The usage line of @verb, for tierctl_usage_err() (output.c), which
 * main() gives this; NULL for an unknown verb. */
static const char *usage_of(const char *verb)
{
	const struct cmd *c = find_cmd(verb);

	return c ? c->usage : NULL;
}

bool tierctl_help(const char *verb, FILE *f)
{
	const struct cmd *c = find_cmd(verb);

	if (!c)
		return false;
	fprintf(f, "usage: tierctl %s\n\n%s.\n\n%s", c->usage, c->summary,
		c->help);
	return true;
}

bool tierctl_want_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			tierctl_help(argv[0], stdout);
			return true;
		}
	}
	return false;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tierctl [--version] [--help] COMMAND [ARGS]\n\n"
		   "Administer tierfs mounts through their control channel.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\n'tierctl help COMMAND' or 'tierctl COMMAND --help' shows "
		"the options of a command.\nExit status: 0 success, 1 failure, "
		"2 bad usage.\n");
}

static int run(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return TIERCTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return TIERCTL_EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("tierctl %s\n", TIERFS_VERSION);
		return TIERCTL_EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return TIERCTL_EXIT_OK;
		}
		if (!tierctl_help(argv[2], stdout)) {
			tierctl_err("unknown command '%s' (see tierctl --help)",
				    qn(argv[2]));
			return TIERCTL_EXIT_USAGE;
		}
		return TIERCTL_EXIT_OK;
	}
	/* commands report bad options themselves, in our format */
	opterr = 0;
	c = find_cmd(argv[1]);
	if (!c) {
		tierctl_err("unknown command '%s' (see tierctl --help)",
			    qn(argv[1]));
		return TIERCTL_EXIT_USAGE;
	}
	if (tierctl_want_help(argc - 1, argv + 1))
		return TIERCTL_EXIT_OK;
	return c->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	tierctl_usage_lookup(usage_of);
	return tierctl_close_stdout(run(argc, argv));
}
