/* SPDX-License-Identifier: MIT */
/*
 * What `vnic --version` prints, fixed when the binary was built: the project
 * version of the top CMakeLists.txt and the git commit of the source tree.
 * Reports record them so that a figure can be traced back to its code.
 *
 * The definitions are generated at build time (cmake/VnicVersion.cmake).
 * Every function returns a static string: callable from any thread, at any
 * time, never NULL.
 */
#ifndef VNIC_APP_VERSION_H
#define VNIC_APP_VERSION_H

/* "0.1.0" */
const char *vnic_version(void);
/*
 * The abbreviated commit ("49c8a77"), "49c8a77-dirty" when tracked files
 * differed from it, or "unknown" when built outside a git checkout.
 */
const char *vnic_git_commit(void);
/* "vnic 0.1.0 (git 49c8a77)": the line of `vnic --version`. */
const char *vnic_version_string(void);

#endif
