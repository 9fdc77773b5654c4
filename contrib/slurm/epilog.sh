#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/tierfs-epilog.sh): remove
# the job's scratch directory /scratch/job$SLURM_JOB_ID made by prolog.sh,
# and with it the job's tier space.  Runs as root on every node of the job
# after its processes have ended.  See README.md next to this file.
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

SCRATCH=/scratch

log() {
	echo "tierfs-epilog: job ${SLURM_JOB_ID:-?}: $*" >&2
	logger -t tierfs-epilog -p daemon.err -- "job ${SLURM_JOB_ID:-?}: $*" 2>/dev/null
	return 0
}

[[ ${SLURM_JOB_ID:-} =~ ^[0-9]+$ ]] || { log "SLURM_JOB_ID missing"; exit 1; }
dir=$SCRATCH/job$SLURM_JOB_ID
[[ -e $dir || -L $dir ]] || exit 0

# --one-file-system: never descend into anything mounted below it.
rm -rf --one-file-system -- "$dir"
# Space that cannot be freed (a dead tierfs answers "Transport endpoint is
# not connected") would starve the next jobs: fail, so that Slurm drains
# the node for an administrator.
if [[ -e $dir || -L $dir ]]; then
	log "cannot remove $dir"
	exit 1
fi
exit 0
