#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/tierfs-epilog.sh): report
# the job's scratch figures, then remove the job's scratch directory
# /scratch/job$SLURM_JOB_ID made by prolog.sh, and with it the job's tier
# space.  Runs as root on every node of the job after its processes have
# ended.  See README.md next to this file.
#
# The report (issue 19) is one line, the same as the SPANK plugin's:
#   tierfs: job 42 on cn001: scratch peak 3.2G of 100G quota; written 10G,
#   2.3G spilled below ram; read 8.0G, 71.0% from ram (reads that reached
#   tierfs: page cache hits are not seen); writeback errors 0
# from the figures tierfs keeps per quota directory (user.tierfs.quota,
# so the job needs a quota of its own: QUOTA_DEFAULT in prolog.sh).  It
# goes to stdout, to syslog (tag tierfs-epilog) and, as the job's user,
# to the end of the job's output file when this script can name it:
# SLURM_JOB_STDOUT with %j, %u, %N, %n and %% expanded (slurm-%j.out in
# the job's working directory when it is unset); a name with another
# pattern (%x, %A, %a, ...: Slurm 22.05 gives the Epilog neither the job
# name nor the array ids) is left alone.
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

SCRATCH=/scratch

log() {
	echo "tierfs-epilog: job ${SLURM_JOB_ID:-?}: $*" >&2
	logger -t tierfs-epilog -p daemon.err -- "job ${SLURM_JOB_ID:-?}: $*" 2>/dev/null
	return 0
}

# report_line DIR: the report of DIR's quota, from user.tierfs.quota
# (fs/ctl_proto.h), or the reason there is none
report_line() {
	local v
	v=$(getfattr --absolute-names --only-values -n user.tierfs.quota -- "$1" 2>/dev/null)
	awk -v job="$SLURM_JOB_ID" -v node="${SLURMD_NODENAME:-$(hostname -s)}" \
		-v dir="$1" '
	function human(v,   u, units) {
		units = "KMGTPE"; u = 0
		while (v >= 1024 && u < 6) { v /= 1024; u++ }
		if (u == 0) return sprintf("%d", v)
		if (v < 10 && v != int(v)) return sprintf("%.1f%s", v, substr(units, u, 1))
		return sprintf("%.0f%s", v, substr(units, u, 1))
	}
	NR == 1 {
		if ($NF != "dir=/job" job) exit
		mine = 1
		first = ""; limit = "-"
		for (i = 1; i < NF; i++) {
			k = $i; sub(/=.*/, "", k); val = substr($i, length(k) + 2)
			if (index(val, "/")) {
				if (k == "total") limit = substr(val, index(val, "/") + 1)
				else if (first == "" && k != "inodes") first = k
			} else {
				f[k] = val; n++
			}
		}
		if (!("peak_bytes" in f) || !("writeback_errors" in f)) {
			print "job " job " on " node ": no scratch report: this tierfs keeps no per-job figures (older than tierfs 0.3?)"
			done = 1; exit
		}
		if (first == "") first = "the first tier"
		line = "job " job " on " node ": scratch peak " human(f["peak_bytes"])
		line = line (limit == "-" ? " (no quota total)" : " of " human(limit) " quota")
		line = line "; written " human(f["write_bytes"]) ", " human(f["spill_bytes"]) " spilled below " first
		r = f["read_bytes"]; b = f["read_below_bytes"]; if (b > r) b = r
		line = line "; read " human(r) ", " (r > 0 ? sprintf("%.1f%%", 100 * (r - b) / r) : "-") " from " first
		line = line " (reads that reached tierfs: page cache hits are not seen)"
		line = line "; writeback errors " f["writeback_errors"]
		if (f["writeback_errors"] > 0) line = line " (" human(f["writeback_lost_bytes"]) " not stored)"
		print line; done = 1
	}
	END {
		if (!done && !mine)
			print "job " job " on " node ": no scratch report: " dir " has no quota of its own, and tierfs counts per quota (set QUOTA_DEFAULT in prolog.sh)"
	}' <<<"$v"
}

# The job's output file, or nothing (see the top).
job_output() {
	local out=${SLURM_JOB_STDOUT:-slurm-%j.out}
	out=${out//%%/$'\001'}
	out=${out//%j/$SLURM_JOB_ID}
	out=${out//%u/${SLURM_JOB_USER:-}}
	out=${out//%N/${SLURMD_NODENAME:-}}
	out=${out//%n/0}
	[[ $out == *%* ]] && return 0
	out=${out//$'\001'/%}
	[[ $out == /* ]] || out=${SLURM_JOB_WORK_DIR:-/nonexistent}/$out
	printf '%s\n' "$out"
}

[[ ${SLURM_JOB_ID:-} =~ ^[0-9]+$ ]] || { log "SLURM_JOB_ID missing"; exit 1; }
dir=$SCRATCH/job$SLURM_JOB_ID
[[ -e $dir || -L $dir ]] || exit 0

if [[ -d $dir && ! -L $dir ]] && command -v getfattr >/dev/null; then
	line=$(report_line "$dir")
	if [ -n "$line" ]; then
		echo "tierfs: $line"
		logger -t tierfs-epilog -p daemon.info -- "$line" 2>/dev/null
		out=$(job_output)
		# as the job's user: the name is the job's to choose; only an
		# existing regular file, and never longer than 10 s
		if [ -n "$out" ] && [[ ${SLURM_JOB_UID:-} =~ ^[0-9]+$ ]] &&
			[[ ${SLURM_JOB_GID:-} =~ ^[0-9]+$ ]]; then
			groups=--clear-groups
			getent passwd "$SLURM_JOB_UID" >/dev/null && groups=--init-groups
			timeout 10 setpriv --reuid="$SLURM_JOB_UID" --regid="$SLURM_JOB_GID" \
				"$groups" -- /bin/sh -c \
				'[ -f "$1" ] && printf "tierfs: %s\n" "$2" >>"$1"' \
				sh "$out" "$line" 2>/dev/null
		fi
	fi
fi

# --one-file-system: never descend into anything mounted below it.  rm
# walks by directory descriptors, so a symlink a process of the job's
# user swaps in meanwhile is removed, not followed.  Mounts are not
# detached here: umount follows symlinks in the path it is given, and the
# job's user controls that path.  So a mount left in the directory (a
# FUSE mount in $TMPDIR, where users may mount FUSE) fails the rm and
# this epilog, and drains the node (with user_allow_other in
# /etc/fuse.conf, one whose daemon never answers can hang the report
# above).  The SPANK plugin detaches them safely (README.md).
rm -rf --one-file-system -- "$dir"
# Space that cannot be freed (a dead tierfs answers "Transport endpoint is
# not connected") would starve the next jobs: fail, so that Slurm drains
# the node for an administrator.
if [[ -e $dir || -L $dir ]]; then
	log "cannot remove $dir"
	exit 1
fi
exit 0
