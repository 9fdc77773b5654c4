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

/* A directory's entries (the S_IFDIR part of struct tfs_inode).  All
 * fields: fs->ns_lock. */
struct tfs_dir {
	struct dentry **d_htab; /* d_hsize buckets */
	uint32_t d_hsize;	/* power of two */
	uint32_t d_nlive;	/* live entries */
	struct dentry **d_order; /* cookie order, live and dead */
	uint32_t d_norder;
	uint32_t d_ndead;
	uint32_t d_cap;
	uint64_t d_next_cookie;
	struct tfs_inode *d_parent; /* ".."; the root for the root and for
				     * a removed directory */
	struct dentry *d_self;	    /* our name in d_parent; NULL once
				     * removed (for paths in messages) */
};

/* An empty directory whose ".." is @parent.  Return: 0 or -ENOMEM. */
int dir_init(struct tfs_dir *d, struct tfs_inode *parent);
/* Free the entries and tables (not the inodes they name). */
void dir_release(struct tfs_dir *d);
/* @name's live entry, or NULL. */
struct dentry *dir_find(const struct tfs_dir *d, const char *name);
/* Add @name -> @inode (the caller checked it is absent).
 * Return: 0 or -ENOMEM (nothing changed). */
int dir_add(struct tfs_dir *d, const char *name, struct tfs_inode *inode);
/* Remove @name's entry; returns its inode, or NULL if absent. */
struct tfs_inode *dir_remove(struct tfs_dir *d, const char *name);
/* Point an existing entry at another inode (rename exchange/replace). */
void dir_set_inode(struct dentry *de, struct tfs_inode *inode);
static inline bool dir_is_empty(const struct tfs_dir *d)
{
	return d->d_nlive == 0;
}
/* First live entry with cookie > @cookie, or NULL. */
struct dentry *dir_next(const struct tfs_dir *d, uint64_t cookie);

#endif /* TIERFS_DIR_H */
