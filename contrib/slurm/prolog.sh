#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/tierfs-prolog.sh): make the
# job's scratch directory /scratch/job$SLURM_JOB_ID on the node's tierfs
# mount, owned by the job's user (mode 0700), and set its tierfs policy.
# Runs as root on every node of the job.  See README.md next to this file.
#
# The policy comes from, in this order (a later setting of a key wins):
#  1. job features, sbatch --constraint=tierfs_fast: FEATURE_POLICY below
#     maps a feature to policy settings.  Slurm runs a job only on nodes
#     that have every feature it asks for, so give the tierfs nodes these
#     features in slurm.conf (NodeName=... Features=tierfs_fast,...).
#  2. words tierfs.KEY=VALUE in the job's --extra string, which Slurm hands
#     to the Prolog as SLURM_JOB_EXTRA (the Prolog does not see the job's
#     own environment):  sbatch --extra="tierfs.split=ram:60G,disk"
#     Slurm 23.02 and later only: 22.05 (Debian 12) has no --extra and
#     sets no SLURM_JOB_EXTRA, so there this step finds nothing; use the
#     SPANK plugin (tierfs_spank.so, README.md) for per-job options.
#     (Not usable where SchedulerParameters=extra_constraints makes
#     --extra a node filter.)
# KEY is tiers, pin, split or promote, stored as user.tierfs.KEY.
#  3. the quota (trusted.tierfs.quota, root only: the job's user cannot
#     change it): the word tierfs.quota=SIZE (or ram:4G,total:200G) in
#     --extra, capped at QUOTA_MAX below; QUOTA_DEFAULT when the job asks
#     for none.  Empty QUOTA_DEFAULT: no quota unless asked for.
# A
# policy for every job belongs on /scratch itself; job directories inherit
# it.  The job's user owns the directory and may change its policy with
# setfattr or tierctl during the job.
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

SCRATCH=/scratch

# The job's quota (see 3. above): sizes as tierfs takes them.
QUOTA_DEFAULT=""        # e.g. 100G
QUOTA_MAX=""            # e.g. 1T: the largest total a job may ask for

# Tier names are those of the [tier.NAME] sections of the mount's config;
# these presets name the default stack's tiers (ram over disk, when tierfs
# is mounted without --tier or a config).  A name the mount lacks is
# refused by tierfs and logged.  With ../examples/tierfs.conf (ram, pmem,
# nvme, hdd) use for instance tiers=ram,pmem,nvme and pin=nvme.
declare -A FEATURE_POLICY=(
	[tierfs_fast]="tiers=ram"            # never on disk: ENOSPC rather than slow
	[tierfs_disk]="pin=disk"             # leave RAM to other jobs
	[tierfs_stream]="promote=0"          # written once, read once: no copying up
)

log() {
	echo "tierfs-prolog: job ${SLURM_JOB_ID:-?}: $*" >&2
	logger -t tierfs-prolog -p daemon.err -- "job ${SLURM_JOB_ID:-?}: $*" 2>/dev/null
	return 0
}

# Set KEY=VALUE on $dir.  A bad policy is the job's mistake, not the
# node's: log it and go on (a failing Prolog would drain the node).
apply() {
	local key=${1%%=*} value=${1#*=}

	case $key in
	tiers|pin|split|promote) ;;
	*) log "ignoring unknown policy key in '$1'"; return 0 ;;
	esac
	# tier names, sizes and -1 need no other characters
	if [[ -z $value || $value == *[!A-Za-z0-9_,:-]* ]]; then
		log "ignoring bad value in '$1'"
		return 0
	fi
	# in double quotes, setfattr takes the value as text even when it
	# starts with 0x or 0s (hex, base64)
	setfattr -n "user.tierfs.$key" -v "\"$value\"" -- "$dir" ||
		log "cannot set $1 on $dir"
	return 0
}

[[ ${SLURM_JOB_ID:-} =~ ^[0-9]+$ && ${SLURM_JOB_UID:-} =~ ^[0-9]+$ ]] ||
	{ log "SLURM_JOB_ID or SLURM_JOB_UID missing"; exit 1; }
gid=${SLURM_JOB_GID:-$(id -g "$SLURM_JOB_UID")}
[[ $gid =~ ^[0-9]+$ ]] || { log "no group for uid $SLURM_JOB_UID"; exit 1; }

# No tierfs on $SCRATCH means a broken node: fail, so that Slurm drains it
# and requeues the job, rather than let the job write its scratch files
# to the root filesystem.
if ! findmnt -t fuse.tierfs --mountpoint "$SCRATCH" >/dev/null; then
	log "$SCRATCH is not a tierfs mount"
	exit 1
fi

dir=$SCRATCH/job$SLURM_JOB_ID
# left over from an earlier run of this job (requeue): start empty (as
# epilog.sh removes it: a mount left there fails this prolog)
if [[ -e $dir || -L $dir ]]; then
	rm -rf --one-file-system -- "$dir" || { log "cannot remove old $dir"; exit 1; }
fi
if ! mkdir -m 0700 -- "$dir" || ! chown -- "$SLURM_JOB_UID:$gid" "$dir"; then
	log "cannot create $dir"
	exit 1
fi

# 1. job features: the constraint expression, split at its operators
constraints=${SLURM_JOB_CONSTRAINTS:-}
read -ra features <<<"${constraints//[!A-Za-z0-9_.-]/ }"
for f in "${features[@]}"; do
	[[ -n ${FEATURE_POLICY[$f]:-} ]] || continue
	read -ra words <<<"${FEATURE_POLICY[$f]}"
	for w in "${words[@]}"; do
		apply "$w"
	done
done

# 2. --extra words tierfs.KEY=VALUE (tierfs.quota=... is step 3)
read -ra words <<<"${SLURM_JOB_EXTRA:-}"
quota=$QUOTA_DEFAULT
for w in "${words[@]}"; do
	case $w in
	tierfs.quota=?*) quota=${w#tierfs.quota=} ;;
	tierfs.?*=*) apply "${w#tierfs.}" ;;
	esac
done

# bytes of a size ("200G"); empty when it is not one
bytes() {
	numfmt --from=iec -- "${1%iB}" 2>/dev/null
}

# 3. the quota: the total asked for (or the whole value when it has no
# "total:"), at most QUOTA_MAX.  Per-tier caps pass as given.  A bad
# value is the job's mistake: log it and fall back to QUOTA_DEFAULT.
if [[ -n $quota ]]; then
	if [[ $quota == *[!A-Za-z0-9_,:-]* ]]; then
		log "ignoring bad quota '$quota'"
		quota=$QUOTA_DEFAULT
	fi
	total=$quota
	[[ $quota == *:* ]] && total=$(sed -n 's/.*\(^\|,\)total:\([^,]*\).*/\2/p' <<<"$quota")
	if [[ -n $QUOTA_MAX ]]; then
		want=$(bytes "$total") max=$(bytes "$QUOTA_MAX")
		if [[ -z $total && $quota == *:* ]]; then
			quota+=",total:$QUOTA_MAX" # tier caps only: add the total
		elif [[ -z $want || ( -n $max && $want -gt $max ) ]]; then
			log "quota '$quota' not within QUOTA_MAX=$QUOTA_MAX: using $QUOTA_MAX"
			quota=$QUOTA_MAX
		fi
	fi
fi
if [[ -n $quota ]] &&
	! setfattr -n trusted.tierfs.quota -v "\"$quota\"" -- "$dir"; then
	# a bad value from the job: log it, keep the default if there is one
	log "cannot set quota '$quota' on $dir"
	if [[ -n $QUOTA_DEFAULT && $quota != "$QUOTA_DEFAULT" ]]; then
		setfattr -n trusted.tierfs.quota -v "\"$QUOTA_DEFAULT\"" -- "$dir" ||
			log "cannot set quota '$QUOTA_DEFAULT' on $dir"
	fi
fi
exit 0
