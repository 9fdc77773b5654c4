/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dir.h -- one directory's entries: a hash table for lookup plus an array
 * in cookie order for readdir.  Only the container: which names may be
 * made, removed or renamed, and the link counts, are namespace.c's.
 *
 * Readdir resumes with a binary search for the first cookie after the
 * offset the kernel gives back.  Removing an entry marks it dead in the
 * array (the hash drops it at once); dead entries are compacted away
 * once they outnumber the live ones, so a listing under way sees every
 * entry that lived throughout exactly once, whatever is added or removed
 * meanwhile.
 *
 * Growth never stops a create for long (issue 12: the doubling to 1Mi
 * buckets rehashed 512Ki entries in one create, 205 ms under ns_lock,
 * and 128Ki buckets in a 100k-entry directory 7-20 ms): the hash
 * table doubles incrementally -- the new table takes the old one's
 * buckets a few at a time on each later add and remove, and a lookup
 * reads whichever of the two holds its bucket now -- and the order array
 * is a list of fixed-size chunks, so growing it allocates one chunk and
 * never copies entries.  Every operation is O(1) but for compaction
 * (amortised O(1) per removal) and readdir's binary search.
 *
 * Locking: every field, and every function here, is under fs->ns_lock:
 * shared for dir_find()/dir_next(), exclusive for changes.
 *
 * Ownership: a directory owns its struct dentry objects (dir_release()
 * frees them); a struct dentry pointer is borrowed and valid while
 * ns_lock is held.  Return: 0 or -ENOMEM for the functions that
 * allocate; lookups return NULL for "absent".
 */
#ifndef TIERFS_DIR_H
#define TIERFS_DIR_H

#include <stdbool.h>
#include <stdint.h>

struct tfs_inode;

/* One name in a directory.  All fields: fs->ns_lock. */
struct dentry {
	struct dentry *d_hnext;	   /* hash chain */
	struct tfs_inode *d_inode; /* holds one i_nlink */
	uint64_t d_cookie;	   /* readdir offset; grows, never reused */
	uint32_t d_hash;
	bool d_dead;		   /* removed; freed at the next compaction */
	uint16_t d_namelen;
	char d_name[];
};

/*
 * A hash table of d_hsize buckets.  While it grows, h_old is the table of
 * half the size it replaces: that table's buckets below h_move are empty
 * (their entries moved here), the others are still in use.  An entry is
 * in h_old->h_b[hash & (d_hsize / 2 - 1)] if that index is >= h_move,
 * else in h_b[hash & (d_hsize - 1)].  All fields: fs->ns_lock.
 */
struct dir_htab {
	struct dir_htab *h_old; /* being emptied into this one, or NULL */
	uint32_t h_move;	/* h_old's buckets below this are moved */
	struct dentry *h_b[];	/* the buckets: hash chains */
};

/* A directory's entries (the S_IFDIR part of struct tfs_inode; its size
 * is the inode's union's, so keep it small).  All fields: fs->ns_lock. */
struct tfs_dir {
	struct dir_htab *d_htab;
	uint32_t d_hsize;	/* buckets in d_htab; a power of two */
	uint32_t d_nlive;	/* live entries */
	/*
	 * Cookie order, live and dead: entry i is
	 * d_order[i / DIR_CHUNK][i % DIR_CHUNK].  Chunk 0 grows by doubling
	 * up to DIR_CHUNK slots (small directories stay small); the others
	 * are DIR_CHUNK slots each.  d_cap is the slots allocated, so there
	 * are ceil(d_cap / DIR_CHUNK) chunks.
	 */
	struct dentry ***d_order;
	uint32_t d_norder;
	uint32_t d_ndead;
	uint32_t d_cap;
	uint64_t d_next_cookie;
	struct tfs_inode *d_parent; /* ".."; the root for the root and for
				     * a removed directory */
	struct dentry *d_self;	    /* our name in d_parent; NULL once
				     * removed (for paths in messages) */
};

/* Slots in every chunk of the order array but the first (power of two). */
#define DIR_CHUNK_SHIFT 12
#define DIR_CHUNK (1u << DIR_CHUNK_SHIFT)

/* An empty directory whose ".." is @parent.  Return: 0 or -ENOMEM. */
int dir_init(struct tfs_dir *d, struct tfs_inode *parent);
/* Free the entries and tables (not the inodes they name). */
void dir_release(struct tfs_dir *d);
/* @name's live entry, or NULL. */
struct dentry *dir_find(const struct tfs_dir *d, const char *name);
/*
 * The entries name inodes but never look inside one: where an entry
 * names a directory, the caller passes that directory's struct tfs_dir
 * as @sub (inode_sub() in inode.h), NULL for anything else, and these
 * functions keep its d_self.  That keeps dir.c below inode.h in the
 * module graph (fs/README.md "Layout of the source").
 */
/* Add @name -> @inode (the caller checked it is absent).
 * Return: 0 or -ENOMEM (nothing changed). */
int dir_add(struct tfs_dir *d, const char *name, struct tfs_inode *inode,
	    struct tfs_dir *sub);
/* Remove @name's entry, whose directory part (if any) is @sub; returns
 * its inode, or NULL if absent. */
struct tfs_inode *dir_remove(struct tfs_dir *d, const char *name,
			     struct tfs_dir *sub);
/* Point an existing entry at another inode (rename exchange/replace). */
void dir_set_inode(struct dentry *de, struct tfs_inode *inode,
		   struct tfs_dir *sub);
static inline bool dir_is_empty(const struct tfs_dir *d)
{
	return d->d_nlive == 0;
}
/* First live entry with cookie > @cookie, or NULL. */
struct dentry *dir_next(const struct tfs_dir *d, uint64_t cookie);

#endif /* TIERFS_DIR_H */
