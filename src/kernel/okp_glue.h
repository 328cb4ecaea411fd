/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the glue's files (module init, debugfs, sysctl). */
#ifndef OKP_GLUE_H
#define OKP_GLUE_H

#include "seam/okp_seam.h"

int okp_debugfs_init(void);
void okp_debugfs_exit(void);
int okp_sysctl_init(void);
void okp_sysctl_exit(void);

#endif /* OKP_GLUE_H */
