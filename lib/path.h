#ifndef XG_PATH_H
#define XG_PATH_H
/*
 * Where state lives (design.md section 4).  Each function returns a new
 * string the caller frees; rel may be NULL or "" for the tree itself.
 *
 *   config  $XG_HOME/config, else $XDG_CONFIG_HOME/xg, else ~/.config/xg
 *   data    $XG_HOME/data,   else $XDG_DATA_HOME/xg,   else ~/.local/share/xg
 *   state   $XG_HOME/state,  else $XDG_STATE_HOME/xg,  else ~/.local/state/xg
 *   share   $XG_SHARE_DIR, else ../share/xg beside the running program when it
 *           exists (an installed tree, or the source tree), else the
 *           compiled-in $(PREFIX)/share/xg
 */
char *xg_path_config(const char *rel);
char *xg_path_data(const char *rel);
char *xg_path_state(const char *rel);
char *xg_path_share(const char *rel);

/*
 * Whether the config, data and state trees can be where the variables put
 * them: the nearest part of each tree's path that exists is a directory
 * that can be looked into.  0, or -1 with *why (the caller frees it) naming
 * the variable the tree comes from (XG_HOME, an XDG_*_HOME or HOME), its
 * value and the part at fault.
 */
int xg_path_check(char **why);

/* "dir/name" in a new string; one slash between them. */
char *xg_path_join(const char *dir, const char *name);

#endif
