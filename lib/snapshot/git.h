#ifndef XG_SNAPSHOT_GIT_H
#define XG_SNAPSHOT_GIT_H
/*
 * libgit2, loaded with dlopen when a snapshot or a replay begins, not
 * linked: linked, it and the fifteen libraries it needs would be loaded
 * and relocated before main, some 2 ms in which xg-snapshot could have
 * passed its request on and scanned the tree.  The scan needs no libgit2,
 * so the loading overlaps it (snapshot/take.c).
 *
 * The table holds each function lib/snapshot/ calls, typed from git2.h's
 * own declarations, and the defines below make each call through it, so
 * the code reads as libgit2's API.  Private to lib/snapshot/ like
 * internal.h, which includes it; nothing may call a git_ function before
 * xg_snapshot_git_load has succeeded.
 */
#include <git2.h>

#define XG_SNAPSHOT_GIT_FUNCTIONS(X) \
	X(attr_get) X(attr_get_many) X(attr_value) X(buf_dispose) X(checkout_options_init) X(checkout_tree) \
	X(commit_free) X(commit_lookup) X(commit_parent_id) \
	X(commit_parentcount) X(commit_tree) X(config_find_global) X(config_find_programdata) \
	X(config_find_system) X(config_find_xdg) X(config_foreach) X(config_free) X(config_open_ondisk) \
	X(config_get_bool) X(config_get_path) X(config_get_string) \
	X(config_set_string) X(error_last) X(filter_list_apply_to_buffer) \
	X(filter_list_free) X(filter_list_load) X(index_clear) X(index_free) \
	X(index_read_tree) X(index_write) X(libgit2_init) X(libgit2_shutdown) \
	X(object_free) X(object_id) X(object_peel) X(object_type2string) \
	X(odb_exists_ext) X(odb_free) X(odb_write) X(oid_cpy) X(oid_fromstrn) \
	X(oid_tostr) X(reference_create) X(reference_free) \
	X(reference_iterator_free) X(reference_iterator_glob_new) \
	X(reference_lookup) X(reference_name) X(reference_name_to_id) \
	X(reference_next) X(reference_symbolic_target) X(reference_target) \
	X(reference_type) X(repository_commondir) X(repository_config) \
	X(repository_config_snapshot) X(repository_free) X(repository_index) \
	X(repository_init_ext) X(repository_init_options_init) \
	X(repository_is_bare) X(repository_odb) X(repository_open) \
	X(repository_open_ext) X(repository_path) X(repository_set_head) \
	X(repository_set_head_detached) X(repository_workdir) \
	X(revparse_single) X(tree_free)

struct xg_snapshot_git {
#define X(name) __typeof__(git_##name) *name;
	XG_SNAPSHOT_GIT_FUNCTIONS(X)
#undef X
};

extern const struct xg_snapshot_git *xg_snapshot_git;

/* Loads libgit2, once: 0, or -1 with why in err. */
int xg_snapshot_git_load(char *err, size_t errlen);
/* The message of libgit2's last error; "unknown error" when there is none
 * or libgit2 is not loaded. */
const char *xg_snapshot_git_message(void);

#define git_attr_get (xg_snapshot_git->attr_get)
#define git_attr_get_many (xg_snapshot_git->attr_get_many)
#define git_attr_value (xg_snapshot_git->attr_value)
#define git_buf_dispose (xg_snapshot_git->buf_dispose)
#define git_checkout_options_init (xg_snapshot_git->checkout_options_init)
#define git_checkout_tree (xg_snapshot_git->checkout_tree)
#define git_commit_free (xg_snapshot_git->commit_free)
#define git_commit_lookup (xg_snapshot_git->commit_lookup)
#define git_commit_parent_id (xg_snapshot_git->commit_parent_id)
#define git_commit_parentcount (xg_snapshot_git->commit_parentcount)
#define git_commit_tree (xg_snapshot_git->commit_tree)
#define git_config_find_global (xg_snapshot_git->config_find_global)
#define git_config_find_programdata (xg_snapshot_git->config_find_programdata)
#define git_config_find_system (xg_snapshot_git->config_find_system)
#define git_config_find_xdg (xg_snapshot_git->config_find_xdg)
#define git_config_foreach (xg_snapshot_git->config_foreach)
#define git_config_free (xg_snapshot_git->config_free)
#define git_config_open_ondisk (xg_snapshot_git->config_open_ondisk)
#define git_config_get_bool (xg_snapshot_git->config_get_bool)
#define git_config_get_path (xg_snapshot_git->config_get_path)
#define git_config_get_string (xg_snapshot_git->config_get_string)
#define git_config_set_string (xg_snapshot_git->config_set_string)
#define git_error_last (xg_snapshot_git->error_last)
#define git_filter_list_apply_to_buffer (xg_snapshot_git->filter_list_apply_to_buffer)
#define git_filter_list_free (xg_snapshot_git->filter_list_free)
#define git_filter_list_load (xg_snapshot_git->filter_list_load)
#define git_index_clear (xg_snapshot_git->index_clear)
#define git_index_free (xg_snapshot_git->index_free)
#define git_index_read_tree (xg_snapshot_git->index_read_tree)
#define git_index_write (xg_snapshot_git->index_write)
#define git_libgit2_init (xg_snapshot_git->libgit2_init)
#define git_libgit2_shutdown (xg_snapshot_git->libgit2_shutdown)
#define git_object_free (xg_snapshot_git->object_free)
#define git_object_id (xg_snapshot_git->object_id)
#define git_object_peel (xg_snapshot_git->object_peel)
#define git_object_type2string (xg_snapshot_git->object_type2string)
#define git_odb_exists_ext (xg_snapshot_git->odb_exists_ext)
#define git_odb_free (xg_snapshot_git->odb_free)
#define git_odb_write (xg_snapshot_git->odb_write)
#define git_oid_cpy (xg_snapshot_git->oid_cpy)
#define git_oid_fromstrn (xg_snapshot_git->oid_fromstrn)
#define git_oid_tostr (xg_snapshot_git->oid_tostr)
#define git_reference_create (xg_snapshot_git->reference_create)
#define git_reference_free (xg_snapshot_git->reference_free)
#define git_reference_iterator_free (xg_snapshot_git->reference_iterator_free)
#define git_reference_iterator_glob_new (xg_snapshot_git->reference_iterator_glob_new)
#define git_reference_lookup (xg_snapshot_git->reference_lookup)
#define git_reference_name (xg_snapshot_git->reference_name)
#define git_reference_name_to_id (xg_snapshot_git->reference_name_to_id)
#define git_reference_next (xg_snapshot_git->reference_next)
#define git_reference_symbolic_target (xg_snapshot_git->reference_symbolic_target)
#define git_reference_target (xg_snapshot_git->reference_target)
#define git_reference_type (xg_snapshot_git->reference_type)
#define git_repository_commondir (xg_snapshot_git->repository_commondir)
#define git_repository_config (xg_snapshot_git->repository_config)
#define git_repository_config_snapshot (xg_snapshot_git->repository_config_snapshot)
#define git_repository_free (xg_snapshot_git->repository_free)
#define git_repository_index (xg_snapshot_git->repository_index)
#define git_repository_init_ext (xg_snapshot_git->repository_init_ext)
#define git_repository_init_options_init (xg_snapshot_git->repository_init_options_init)
#define git_repository_is_bare (xg_snapshot_git->repository_is_bare)
#define git_repository_odb (xg_snapshot_git->repository_odb)
#define git_repository_open (xg_snapshot_git->repository_open)
#define git_repository_open_ext (xg_snapshot_git->repository_open_ext)
#define git_repository_path (xg_snapshot_git->repository_path)
#define git_repository_set_head (xg_snapshot_git->repository_set_head)
#define git_repository_set_head_detached (xg_snapshot_git->repository_set_head_detached)
#define git_repository_workdir (xg_snapshot_git->repository_workdir)
#define git_revparse_single (xg_snapshot_git->revparse_single)
#define git_tree_free (xg_snapshot_git->tree_free)

#endif
